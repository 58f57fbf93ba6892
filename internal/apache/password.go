package apache

import "hash/adler32"

// superSecret is what Apache XORs into a session id to seed the session's
// password (ZooKeeperServer.superSecret).
const superSecret = 0xB3415C00

// Password returns the password Apache gives session id: 16 bytes of
// java.util.Random seeded with id ^ superSecret (generatePasswd). Apache
// stores no password; it recomputes it, so an imported session gets the
// same one and its client's reconnect is accepted.
func Password(id int64) []byte {
	const (
		mult = 0x5DEECE66D
		mask = 1<<48 - 1
	)
	seed := (uint64(id^superSecret) ^ mult) & mask
	p := make([]byte, 16)
	for i := 0; i < len(p); {
		seed = (seed*mult + 0xB) & mask
		rnd := int32(seed >> 16) // next(32)
		for n := min(len(p)-i, 4); n > 0; n-- {
			p[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
	return p
}

func adler(b []byte) uint32 { return adler32.Checksum(b) }
