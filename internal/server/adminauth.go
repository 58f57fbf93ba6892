package server

import (
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// RootACL returns the root node's ACL, which Apache 3.9's AdminServer
// checks (ALL on "/") before running a protected command.
func (s *Server) RootACL() ([]jute.ACL, error) {
	var (
		acls []jute.ACL
		err  error
	)
	s.rep.Read(func(st *txn.State, _ int64) { acls, _, err = st.Tree.ACL("/") })
	return acls, err
}
