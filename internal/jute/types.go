package jute

// Id is an identity in an auth scheme (org.apache.zookeeper.data.Id).
type Id struct {
	Scheme string
	ID     string
}

func (x *Id) Encode(w *Writer) { w.String(x.Scheme); w.String(x.ID) }
func (x *Id) Decode(r *Reader) { x.Scheme = r.String(); x.ID = r.String() }

// ACL grants Perms to an Id (org.apache.zookeeper.data.ACL).
type ACL struct {
	Perms int32
	ID    Id
}

func (x *ACL) Encode(w *Writer) { w.Int(x.Perms); x.ID.Encode(w) }
func (x *ACL) Decode(r *Reader) { x.Perms = r.Int(); x.ID.Decode(r) }

// EncodeACLs writes a vector of ACLs; nil is encoded as count -1.
func EncodeACLs(w *Writer, v []ACL) {
	if v == nil {
		w.Int(-1)
		return
	}
	w.Int(int32(len(v)))
	for i := range v {
		v[i].Encode(w)
	}
}

// DecodeACLs reads a vector of ACLs; count -1 yields nil.
func DecodeACLs(r *Reader) []ACL {
	n := r.VectorLen(12) // perms + two empty strings
	if n < 0 || r.Err() != nil {
		return nil
	}
	v := make([]ACL, n)
	for i := range v {
		v[i].Decode(r)
	}
	return v
}

// Stat is a znode's metadata as clients see it (org.apache.zookeeper.data.Stat).
type Stat struct {
	Czxid          int64 // zxid of the change that created the znode
	Mzxid          int64 // zxid of the change that last modified its data
	Ctime          int64 // ms since the epoch when the znode was created
	Mtime          int64 // ms since the epoch when its data last changed
	Version        int32 // number of changes to its data
	Cversion       int32 // number of changes to its children
	Aversion       int32 // number of changes to its ACL
	EphemeralOwner int64 // session id of the owner of an ephemeral, else 0
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the change that last modified its children
}

// StatSize is the encoded size of a Stat.
const StatSize = 8*6 + 4*5

func (s *Stat) Encode(w *Writer) {
	w.Long(s.Czxid)
	w.Long(s.Mzxid)
	w.Long(s.Ctime)
	w.Long(s.Mtime)
	w.Int(s.Version)
	w.Int(s.Cversion)
	w.Int(s.Aversion)
	w.Long(s.EphemeralOwner)
	w.Int(s.DataLength)
	w.Int(s.NumChildren)
	w.Long(s.Pzxid)
}

func (s *Stat) Decode(r *Reader) {
	s.Czxid = r.Long()
	s.Mzxid = r.Long()
	s.Ctime = r.Long()
	s.Mtime = r.Long()
	s.Version = r.Int()
	s.Cversion = r.Int()
	s.Aversion = r.Int()
	s.EphemeralOwner = r.Long()
	s.DataLength = r.Int()
	s.NumChildren = r.Int()
	s.Pzxid = r.Long()
}
