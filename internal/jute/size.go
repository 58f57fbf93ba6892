package jute

// Sizes of the replies a server sends most, so that AppendFrame allocates
// a reply's buffer once instead of growing it from empty through every
// size class on its way to, for a 1 KiB getData, 1.1 KiB (the copies and
// the garbage were a tenth of a server's CPU at 100% reads, issue 14).
// A record that is not a sizer gets defaultRecordSize and the buffer grows
// as before if that is short, so a size here only needs to be right to be
// fast, never to be correct; TestEncodedSize checks each against Encode.

// replyHeaderSize is ReplyHeader's encoded size: xid, zxid, err.
const replyHeaderSize = 4 + 8 + 4

// defaultRecordSize is what AppendFrame reserves for a record that does
// not report its size.
const defaultRecordSize = 64

// sizer is implemented by records that know their encoded size cheaply.
type sizer interface{ encodedSize() int }

func (x *ReplyHeader) encodedSize() int     { return replyHeaderSize }
func (x *StatResponse) encodedSize() int    { return StatSize }
func (s *Stat) encodedSize() int            { return StatSize }
func (x *GetDataResponse) encodedSize() int { return 4 + len(x.Data) + StatSize }
func (x *CreateResponse) encodedSize() int  { return 4 + len(x.Path) }
func (x *Create2Response) encodedSize() int { return 4 + len(x.Path) + StatSize }
func (x *WatcherEvent) encodedSize() int    { return 4 + 4 + 4 + len(x.Path) }
func (x *GetChildrenResponse) encodedSize() int {
	return stringListSize(x.Children)
}
func (x *GetChildren2Response) encodedSize() int {
	return stringListSize(x.Children) + StatSize
}

func stringListSize(v []string) int {
	n := 4
	for _, s := range v {
		n += 4 + len(s)
	}
	return n
}

// FrameSize is the space AppendFrame reserves for a frame of recs: their
// encoded size, where they report it, length prefix included.
func FrameSize(recs ...Record) int {
	n := 4
	for _, rec := range recs {
		switch r := rec.(type) {
		case nil:
		case sizer:
			n += r.encodedSize()
		default:
			n += defaultRecordSize
		}
	}
	return n
}
