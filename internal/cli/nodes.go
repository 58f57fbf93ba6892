package cli

import (
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// maxTTL is the largest TTL the server accepts (EphemeralType.MAX_TTL).
const maxTTL = 1<<40 - 1

// pathArg validates the command's path argument i.
func pathArg(c *cmdLine, i int) (string, error) {
	p := c.args[i]
	return p, validatePath(p, false)
}

// cmdLs is "ls [-s] [-w] [-R] path".
func cmdLs(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	if c.has('R') {
		return s.lsRecursive(p)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var children []string
	var st zk.Stat
	if c.has('w') {
		var ch <-chan zk.Event
		children, st, ch, err = s.client.ChildrenW(ctx, p)
		if err == nil {
			s.addWatch(ch)
		}
	} else {
		children, st, err = s.client.Children(ctx, p)
	}
	if err != nil {
		return err
	}
	slices.Sort(children)
	s.printf("%s\n", formatList(children))
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// lsRecursive prints p and every node under it, one path a line, in
// breadth-first order as zkCli's ZKUtil.listSubTreeBFS.
func (s *shell) lsRecursive(p string) error {
	nodes, err := s.subtree(p)
	if err != nil {
		return err
	}
	s.printf("%s\n", strings.Join(nodes, "\n"))
	return nil
}

// subtree lists p and its descendants breadth first, children sorted.
func (s *shell) subtree(p string) ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	nodes := []string{p}
	for i := 0; i < len(nodes); i++ {
		children, _, err := s.client.Children(ctx, nodes[i])
		if errors.Is(err, zk.ErrNoNode) && i > 0 {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		slices.Sort(children)
		for _, ch := range children {
			nodes = append(nodes, path.Join(nodes[i], ch))
		}
	}
	return nodes, nil
}

// cmdCreate is "create [-s] [-e] [-c] [-t ttl] path [data] [acl]".
func cmdCreate(s *shell, c *cmdLine) error {
	mode, ttl, err := createMode(c)
	if err != nil {
		return err
	}
	p := c.args[0]
	if err := validatePath(p, c.has('s')); err != nil {
		return err
	}
	var data []byte
	if len(c.args) > 1 {
		data = []byte(c.args[1])
	}
	acl := zk.OpenACLUnsafe()
	if len(c.args) > 2 {
		if acl = s.parseACL(c.args[2]); len(acl) == 0 {
			return failure("KeeperErrorCode = InvalidACL\n" + errEmptyACL.Error())
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var created string
	if ttl > 0 {
		created, _, err = s.client.CreateTTL(ctx, p, data, mode, acl, ttl)
	} else {
		created, _, err = s.client.Create(ctx, p, data, mode, acl)
	}
	var ze *zk.Error
	if errors.Is(err, zk.ErrInvalidACL) && errors.As(err, &ze) {
		// create says it twice: the exception, then its own sentence.
		return failure(keeperMessage(ze) + "\n" + message(err))
	}
	if err != nil {
		return err
	}
	s.errorf("Created %s\n", created)
	return nil
}

// createMode maps create's flags to a mode, with zkCli's checks.
func createMode(c *cmdLine) (zk.CreateMode, time.Duration, error) {
	seq, eph, cont := c.has('s'), c.has('e'), c.has('c')
	if cont && (seq || eph) {
		return 0, 0, failure("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl time.Duration
	if v, ok := c.opts['t']; ok {
		if eph {
			return 0, 0, failure("TTLs cannot be used with Ephemeral znodes")
		}
		if cont {
			return 0, 0, failure("TTLs cannot be used with Container znodes")
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, failure("-t argument must be a long value")
		}
		if n <= 0 || n > maxTTL {
			return 0, 0, fail("ttl must be positive and cannot be larger than: %d", int64(maxTTL))
		}
		ttl = time.Duration(n) * time.Millisecond
	}
	switch {
	case cont:
		return zk.Container, 0, nil
	case ttl > 0 && seq:
		return zk.PersistentSequentialWithTTL, ttl, nil
	case ttl > 0:
		return zk.PersistentWithTTL, ttl, nil
	case seq && eph:
		return zk.EphemeralSequential, 0, nil
	case seq:
		return zk.PersistentSequential, 0, nil
	case eph:
		return zk.Ephemeral, 0, nil
	}
	return zk.Persistent, 0, nil
}

// cmdGet is "get [-s] [-w] path".
func cmdGet(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var data []byte
	var st zk.Stat
	if c.has('w') {
		var ch <-chan zk.Event
		data, st, ch, err = s.client.GetW(ctx, p)
		if err == nil {
			s.addWatch(ch)
		}
	} else {
		data, st, err = s.client.Get(ctx, p)
	}
	if err != nil {
		return err
	}
	s.printf("%s\n", formatData(data))
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// versionOpt is the -v option, -1 (any version) when absent.
func versionOpt(c *cmdLine) (int32, error) {
	v, ok := c.opts['v']
	if !ok {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		// zkCli dies here with a NumberFormatException; say what it says.
		return 0, fail("java.lang.NumberFormatException: For input string: \"%s\"", v)
	}
	return int32(n), nil
}

// cmdSet is "set [-s] [-v version] path data".
func cmdSet(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	v, err := versionOpt(c)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	st, err := s.client.Set(ctx, p, []byte(c.args[1]), v)
	if err != nil {
		return err
	}
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// cmdStat is "stat [-w] path".
func cmdStat(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var ok bool
	var st zk.Stat
	if c.has('w') {
		var ch <-chan zk.Event
		ok, st, ch, err = s.client.ExistsW(ctx, p)
		if err == nil {
			s.addWatch(ch)
		}
	} else {
		ok, st, err = s.client.Exists(ctx, p)
	}
	if err == nil && !ok {
		err = &zk.Error{Op: "exists", Path: p, Err: zk.ErrNoNode}
	}
	if err != nil {
		return err
	}
	s.printf("%s", formatStat(st))
	return nil
}

// cmdDelete is "delete [-v version] path".
func cmdDelete(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	v, err := versionOpt(c)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.client.Delete(ctx, p, v)
}

// cmdDeleteAll is "deleteall path [-b batch size]": the subtree, deepest
// nodes first. The batch size only tunes zkCli's multi batching; we
// delete one node at a time.
func cmdDeleteAll(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	if b, ok := c.opts['b']; ok {
		if n, err := strconv.Atoi(b); err != nil || n <= 0 {
			return failure("Batch size must be greater than 0")
		}
	}
	return s.deleteAll(p)
}

func (s *shell) deleteAll(p string) error {
	nodes, err := s.subtree(p)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i] == "/" || nodes[i] == "/zookeeper" || strings.HasPrefix(nodes[i], "/zookeeper/") {
			continue // the server's own nodes cannot go
		}
		if err := s.client.Delete(ctx, nodes[i], -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// cmdSync is "sync path".
func cmdSync(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.client.Sync(ctx, p); err != nil {
		return fail("Sync is not OK: %s", message(err))
	}
	s.printf("Sync is OK\n")
	return nil
}

// cmdEphemerals is "getEphemerals [path]": the session's ephemeral nodes
// under path (everywhere by default).
func cmdEphemerals(s *shell, c *cmdLine) error {
	p := "/"
	if len(c.args) > 0 {
		p = c.args[0]
	}
	if err := validatePath(p, false); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	paths, err := s.client.GetEphemerals(ctx, p)
	if err != nil {
		return err
	}
	slices.Sort(paths)
	s.printf("%s\n", formatList(paths))
	return nil
}

// cmdAllChildren is "getAllChildrenNumber path".
func cmdAllChildren(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := s.client.GetAllChildrenNumber(ctx, p)
	if err != nil {
		return err
	}
	s.printf("%d\n", n)
	return nil
}
