package zk

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// ProtectedPrefix starts the name of every node made by CreateProtected:
// "_c_" followed by a random UUID and "-", as Curator's withProtection()
// names them, so that Curator's recipes and Zoo's recognise each other's
// nodes.
const ProtectedPrefix = "_c_"

// protectedCleanup bounds the search-and-delete of an abandoned protected
// ephemeral node after the caller's context ended.
const protectedCleanup = 10 * time.Second

// NewProtectedID returns a random (version 4) UUID in its usual text
// form, the identifier of one protected create.
func NewProtectedID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ProtectedName returns the name a protected create gives the node name
// under the protected id: "_c_<id>-<name>" (sequential modes add their
// suffix to it).
func ProtectedName(id, name string) string { return ProtectedPrefix + id + "-" + name }

// ProtectedID returns the id in a protected node's name, and whether the
// name is one ("_c_" + 36-character UUID + "-").
func ProtectedID(name string) (string, bool) {
	const idLen = 36
	if !strings.HasPrefix(name, ProtectedPrefix) || len(name) < len(ProtectedPrefix)+idLen+1 ||
		name[len(ProtectedPrefix)+idLen] != '-' {
		return "", false
	}
	return name[len(ProtectedPrefix) : len(ProtectedPrefix)+idLen], true
}

// StripProtected returns a node name without its protected prefix
// ("_c_<id>-lock-0000000001" gives "lock-0000000001"); other names are
// returned unchanged.
func StripProtected(name string) string {
	if _, ok := ProtectedID(name); ok {
		return name[len(ProtectedPrefix)+36+1:]
	}
	return name
}

// CreateProtected is Create for nodes whose create may be lost: the
// Curator recipe "withProtection". The node's name gets the prefix
// "_c_<uuid>-" (see ProtectedName). If the reply is lost
// (ErrConnectionLoss), the node may or may not exist and, for a
// sequential mode, its name is unknown; CreateProtected then lists the
// parent once the client has reconnected, adopts the node carrying its
// uuid if the create took effect, and creates again if it did not. So a
// lost reply leaves neither an orphan nor a duplicate. It returns the
// path of the node and the id it used.
//
// If ctx ends while the outcome is unknown, an ephemeral node that did
// get created is looked for and deleted (bounded by a timeout of its
// own), so that it does not hold a place in a lock's line until the
// session ends.
func (c *Client) CreateProtected(ctx context.Context, p string, data []byte, mode CreateMode, acl []ACL) (string, error) {
	dir, name := path.Split(p)
	if dir == "" || name == "" && !mode.sequential() {
		return "", &Error{Op: "create", Path: p, Err: ErrInvalidPath}
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "/"
	}
	id := NewProtectedID()
	full := path.Join(dir, ProtectedName(id, name))
	lost := false
	for {
		created, _, err := c.Create(ctx, full, data, mode, acl)
		if err == nil {
			return created, nil
		}
		if lost && errors.Is(err, ErrNodeExists) && !mode.sequential() {
			// An earlier attempt whose reply was lost took effect.
			return full, nil
		}
		if !errors.Is(err, ErrConnectionLoss) {
			return "", err
		}
		lost = true
		found, ferr := c.findProtected(ctx, dir, id)
		if ferr == nil && found != "" {
			return found, nil
		}
		if ctx.Err() != nil {
			if mode == Ephemeral || mode == EphemeralSequential {
				c.deleteProtected(ctx, dir, id)
			}
			return "", err
		}
		if ferr != nil && !errors.Is(ferr, ErrConnectionLoss) {
			return "", ferr
		}
	}
}

// findProtected returns the path of the child of dir made with id, or "".
func (c *Client) findProtected(ctx context.Context, dir, id string) (string, error) {
	for {
		kids, _, err := c.Children(ctx, dir)
		if errors.Is(err, ErrConnectionLoss) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return "", err
		}
		for _, k := range kids {
			if got, ok := ProtectedID(k); ok && got == id {
				return path.Join(dir, k), nil
			}
		}
		return "", nil
	}
}

// deleteProtected removes the node made with id under dir, if any. Best
// effort: it is what a caller who gave up would want, and the node is
// ephemeral, so at worst the session's end removes it.
func (c *Client) deleteProtected(ctx context.Context, dir, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), protectedCleanup)
	defer cancel()
	if p, err := c.findProtected(ctx, dir, id); err == nil && p != "" {
		_ = c.Delete(ctx, p, -1)
	}
}

// CreateContainer creates a container node (Container mode): the server
// deletes it once it has had children and has none left. Recipes keep
// their directories in containers so that they do not pile up.
func (c *Client) CreateContainer(ctx context.Context, p string, data []byte, acl []ACL) (string, Stat, error) {
	return c.Create(ctx, p, data, Container, acl)
}

// CreateParents creates the missing ancestors of p (not p itself) as
// container nodes with acl, as Curator's creatingParentContainersIfNeeded.
// A server without containers (before 3.5.1) answers ErrUnimplemented;
// the ancestors are then created as persistent nodes.
func (c *Client) CreateParents(ctx context.Context, p string, acl []ACL) error {
	parent := path.Dir(p)
	if parent == "/" || parent == "." {
		return nil
	}
	for {
		ok, _, err := c.Exists(ctx, parent)
		if errors.Is(err, ErrConnectionLoss) && ctx.Err() == nil {
			continue
		}
		if err != nil || ok {
			return err
		}
		break
	}
	if err := c.CreateParents(ctx, parent, acl); err != nil {
		return err
	}
	mode := Container
	for {
		_, _, err := c.Create(ctx, parent, nil, mode, acl)
		switch {
		case err == nil, errors.Is(err, ErrNodeExists):
			return nil
		case errors.Is(err, ErrUnimplemented) && mode == Container:
			mode = Persistent
		case errors.Is(err, ErrConnectionLoss) && ctx.Err() == nil:
			// Retried: a create is idempotent up to NodeExists.
		default:
			return err
		}
	}
}
