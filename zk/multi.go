package zk

import (
	"context"
	"fmt"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Op is one write of a Multi: CreateOp, CreateTTLOp, DeleteOp, SetDataOp
// or CheckOp.
type Op struct {
	op      jute.Op
	name    string
	path    string
	seq     bool
	mode    CreateMode
	data    []byte
	acl     []ACL
	ttl     time.Duration
	version int32
}

// CreateOp creates a node, as Create. Its result has the node's Stat only
// for Container mode: the protocol's multi answers other creates with the
// path alone (Apache 3.8 does so even when asked for create2).
func CreateOp(path string, data []byte, mode CreateMode, acl []ACL) Op {
	return Op{op: jute.OpCreate, name: "create", path: path, seq: mode.sequential(), mode: mode, data: data, acl: acl}
}

// CreateTTLOp creates a node with a TTL, as CreateTTL.
func CreateTTLOp(path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) Op {
	return Op{op: jute.OpCreateTTL, name: "create", path: path, seq: mode.sequential(), mode: mode, data: data, acl: acl, ttl: ttl}
}

// DeleteOp deletes a node if its version matches (-1 for any), as Delete.
func DeleteOp(path string, version int32) Op {
	return Op{op: jute.OpDelete, name: "delete", path: path, version: version}
}

// SetDataOp sets a node's data if its version matches, as Set.
func SetDataOp(path string, data []byte, version int32) Op {
	return Op{op: jute.OpSetData, name: "setData", path: path, data: data, version: version}
}

// CheckOp succeeds only if the node exists with the given data version
// (-1 for any).
func CheckOp(path string, version int32) Op {
	return Op{op: jute.OpCheck, name: "check", path: path, version: version}
}

// OpResult is the outcome of one Op of a Multi.
type OpResult struct {
	Path string // CreateOp: the path of the new node
	Stat Stat   // SetDataOp, CreateTTLOp, container CreateOp: the node's new Stat
	Err  error  // nil if the op succeeded (see Multi)
}

// record builds the op's request record, with the server path.
func (o Op) record(c *Client) (jute.MultiOp, error) {
	bad := func(err error) (jute.MultiOp, error) {
		return jute.MultiOp{}, &Error{Op: "multi", Path: o.path, Err: err}
	}
	if o.op == 0 {
		return bad(fmt.Errorf("%w: zero Op", ErrBadArguments))
	}
	sp, err := c.validPath(o.name, o.path, o.seq)
	if err != nil {
		return jute.MultiOp{}, err
	}
	switch o.op {
	case jute.OpCreate, jute.OpCreateTTL:
		if len(o.acl) == 0 {
			return bad(ErrInvalidACL)
		}
		if o.mode < Persistent || o.mode > PersistentSequentialWithTTL || o.mode.ttl() != (o.op == jute.OpCreateTTL) {
			return bad(fmt.Errorf("%w: mode %d in %s", ErrBadArguments, o.mode, o.op))
		}
		if o.op == jute.OpCreateTTL {
			return jute.MultiOp{Op: o.op, Record: &jute.CreateTTLRequest{Path: sp, Data: o.data, ACL: toJuteACL(o.acl), Flags: int32(o.mode), TTL: o.ttl.Milliseconds()}}, nil
		}
		op := o.op
		if o.mode == Container { // Apache accepts createContainer in a multi and answers create2
			op = jute.OpCreateContainer
		}
		return jute.MultiOp{Op: op, Record: &jute.CreateRequest{Path: sp, Data: o.data, ACL: toJuteACL(o.acl), Flags: int32(o.mode)}}, nil
	case jute.OpDelete, jute.OpCheck:
		return jute.MultiOp{Op: o.op, Record: &jute.PathVersion{Path: sp, Version: o.version}}, nil
	case jute.OpSetData:
		return jute.MultiOp{Op: o.op, Record: &jute.SetDataRequest{Path: sp, Data: o.data, Version: o.version}}, nil
	}
	return bad(fmt.Errorf("%w: op %v", ErrBadArguments, o.op))
}

func (c *Client) multiOp(ops []Op) (*call, func() []OpResult, error) {
	req := jute.MultiRequest{Ops: make([]jute.MultiOp, len(ops))}
	for i, o := range ops {
		mo, err := o.record(c)
		if err != nil {
			return nil, nil, err
		}
		req.Ops[i] = mo
	}
	var resp jute.MultiResponse
	cl, err := c.newCall(jute.OpMulti, "multi", "", &req, &resp)
	if err != nil {
		return nil, nil, err
	}
	var results []OpResult
	// The results are decoded on the reader goroutine; the call's error is
	// that of the op that failed, if one did.
	cl.onReply = func(err error, _ bool) error {
		if err != nil {
			return err
		}
		if len(resp.Results) != len(ops) {
			return fmt.Errorf("%w: %d results for %d ops", ErrMarshallingError, len(resp.Results), len(ops))
		}
		results = make([]OpResult, len(ops))
		var failed error
		for i, r := range resp.Results {
			res := &results[i]
			switch rec := r.Record.(type) {
			case *jute.CreateResponse:
				res.Path = c.clientPath(rec.Path)
			case *jute.Create2Response:
				res.Path, res.Stat = c.clientPath(rec.Path), fromJuteStat(&rec.Stat)
			case *jute.StatResponse:
				res.Stat = fromJuteStat(&rec.Stat)
			}
			if code := codeErr(int32(r.Err)); code != nil {
				res.Err = &Error{Op: ops[i].name, Path: ops[i].path, Err: code}
				if failed == nil {
					failed = res.Err
				}
			}
		}
		if failed != nil {
			cl.path = failed.(*Error).Path
			return failed.(*Error).Err
		}
		return nil
	}
	return cl, func() []OpResult { return results }, nil
}

// Multi applies ops atomically: all of them or none. On success every
// result's Err is nil. If an op fails, nothing is applied, Multi returns
// that op's error (with its path), and the results say what happened to
// each op: the failed one carries its error, those after it
// ErrRuntimeInconsistency (not attempted), those before it nil (undone).
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	cl, res, err := c.multiOp(ops)
	if err != nil {
		return nil, err
	}
	err = c.do(ctx, cl)
	select {
	case <-cl.done: // the reply came: results are complete, even on failure
		return res(), cl.wrap(err)
	default: // not sent, or abandoned: the reader may still be decoding
		return nil, cl.wrap(err)
	}
}

// MultiAsync is Multi, completed by cb.
func (c *Client) MultiAsync(ctx context.Context, ops []Op, cb func(results []OpResult, err error)) error {
	cl, res, err := c.multiOp(ops)
	if err != nil {
		return err
	}
	cl.async = func() { cb(res(), cl.wrap(cl.err)) }
	return cl.wrap(c.submit(ctx, cl))
}

// ReadOp is one read of a MultiRead: GetDataOp or GetChildrenOp.
type ReadOp struct {
	op   jute.Op
	name string
	path string
}

// GetDataOp reads a node's data and Stat, as Get.
func GetDataOp(path string) ReadOp { return ReadOp{jute.OpGetData, "getData", path} }

// GetChildrenOp lists a node's children, as Children (without the Stat:
// the protocol's multiRead does not return it).
func GetChildrenOp(path string) ReadOp { return ReadOp{jute.OpGetChildren, "getChildren", path} }

// ReadResult is the outcome of one ReadOp.
type ReadResult struct {
	Data     []byte   // GetDataOp
	Stat     Stat     // GetDataOp
	Children []string // GetChildrenOp
	Err      error    // this read's error; the others are not affected
}

func (c *Client) multiReadOp(ops []ReadOp) (*call, func() []ReadResult, error) {
	req := jute.MultiRequest{Ops: make([]jute.MultiOp, len(ops))}
	for i, o := range ops {
		if o.op == 0 {
			return nil, nil, &Error{Op: "multiRead", Err: fmt.Errorf("%w: zero ReadOp", ErrBadArguments)}
		}
		sp, err := c.validPath(o.name, o.path, false)
		if err != nil {
			return nil, nil, err
		}
		req.Ops[i] = jute.MultiOp{Op: o.op, Record: &jute.PathWatch{Path: sp}}
	}
	var resp jute.MultiResponse
	cl, err := c.newCall(jute.OpMultiRead, "multiRead", "", &req, &resp)
	if err != nil {
		return nil, nil, err
	}
	var results []ReadResult
	cl.onReply = func(err error, _ bool) error {
		if err != nil {
			return err
		}
		if len(resp.Results) != len(ops) {
			return fmt.Errorf("%w: %d results for %d reads", ErrMarshallingError, len(resp.Results), len(ops))
		}
		results = make([]ReadResult, len(ops))
		for i, r := range resp.Results {
			switch rec := r.Record.(type) {
			case *jute.GetDataResponse:
				results[i].Data, results[i].Stat = rec.Data, fromJuteStat(&rec.Stat)
			case *jute.GetChildrenResponse:
				results[i].Children = rec.Children
			}
			if code := codeErr(int32(r.Err)); code != nil {
				results[i].Err = &Error{Op: ops[i].name, Path: ops[i].path, Err: code}
			}
		}
		return nil
	}
	return cl, func() []ReadResult { return results }, nil
}

// MultiRead runs reads together and returns each one's result; unlike
// Multi, one read failing does not fail the others or the call. The reads
// are not atomic with respect to writes by others.
func (c *Client) MultiRead(ctx context.Context, ops ...ReadOp) ([]ReadResult, error) {
	cl, res, err := c.multiReadOp(ops)
	if err != nil {
		return nil, err
	}
	return syncCall(ctx, c, cl, res)
}

// MultiReadAsync is MultiRead, completed by cb.
func (c *Client) MultiReadAsync(ctx context.Context, ops []ReadOp, cb func(results []ReadResult, err error)) error {
	cl, res, err := c.multiReadOp(ops)
	if err != nil {
		return err
	}
	return asyncCall(ctx, c, cl, res, cb)
}
