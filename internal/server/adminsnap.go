package server

import (
	"io"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/txn"
)

// WriteApacheSnapshot writes the applied state to w as an Apache snapshot
// file (uncompressed, Apache's default) and returns the zxid it is taken
// at, for the AdminServer's snapshot command. The state is read-locked
// for the whole write, so the file is consistent at that zxid but applies
// wait meanwhile: w should be a local file, not a network client.
func (s *Server) WriteApacheSnapshot(w io.Writer) (zxid int64, err error) {
	s.rep.Read(func(st *txn.State, z int64) {
		zxid = z
		err = apache.WriteSnapshot(w, st, z, apache.Plain)
	})
	return zxid, err
}
