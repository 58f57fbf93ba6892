package cli

import (
	"strings"

	"github.com/zoohq/zoo/zk"
)

// parseACL reads zkCli's ACL syntax, "scheme:id:perms[,...]", where the id
// may itself contain colons (digest "user:hash", IPv6). Like zkCli it
// reports bad entries and unknown permission letters and goes on with
// the rest.
func (s *shell) parseACL(text string) []zk.ACL {
	var acl []zk.ACL
	for _, a := range strings.Split(text, ",") {
		first, last := strings.IndexByte(a, ':'), strings.LastIndexByte(a, ':')
		if first < 0 || first == last {
			s.errorf("%s does not have the form scheme:id:perm\n", a)
			continue
		}
		acl = append(acl, zk.ACL{Scheme: a[:first], ID: a[first+1 : last], Perms: s.parsePerms(a[last+1:])})
	}
	return acl
}

// errEmptyACL is zkCli's message for an ACL of which no entry could be
// parsed: the Java client rejects it before sending, with no path.
var errEmptyACL = failure("Acl is not valid : null")

// parsePerms reads permission letters, "cdrwa" in any order.
func (s *shell) parsePerms(text string) int32 {
	var perms int32
	for _, c := range text {
		switch c {
		case 'r':
			perms |= zk.PermRead
		case 'w':
			perms |= zk.PermWrite
		case 'c':
			perms |= zk.PermCreate
		case 'd':
			perms |= zk.PermDelete
		case 'a':
			perms |= zk.PermAdmin
		default:
			s.errorf("Unknown perm type: %c\n", c)
		}
	}
	return perms
}

// cmdGetACL is "getAcl [-s] path".
func cmdGetACL(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	acl, st, err := s.client.GetACL(ctx, p)
	if err != nil {
		return err
	}
	s.printf("%s", formatACL(acl))
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// cmdSetACL is "setAcl [-s] [-v version] [-R] path acl".
func cmdSetACL(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	v, err := versionOpt(c)
	if err != nil {
		return err
	}
	acl := s.parseACL(c.args[1])
	if len(acl) == 0 {
		return errEmptyACL
	}
	nodes := []string{p}
	if c.has('R') {
		if nodes, err = s.subtree(p); err != nil {
			return err
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var st zk.Stat
	for i, n := range nodes {
		got, err := s.client.SetACL(ctx, n, acl, v)
		if err != nil {
			return err
		}
		if i == 0 {
			st = got
		}
	}
	if c.has('s') {
		s.printf("%s", formatStat(st))
	}
	return nil
}

// cmdAddAuth is "addauth scheme auth".
func cmdAddAuth(s *shell, c *cmdLine) error {
	var auth []byte
	if len(c.args) > 1 {
		auth = []byte(c.args[1])
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.client.AddAuth(ctx, c.args[0], auth)
}

// cmdWhoAmI is "whoami": the session's identities.
func cmdWhoAmI(s *shell, _ *cmdLine) error {
	ctx, cancel := s.ctx()
	defer cancel()
	ids, err := s.client.WhoAmI(ctx)
	if err != nil {
		return err
	}
	s.printf("Auth scheme: User\n")
	for _, id := range ids {
		s.printf("%s: %s\n", id.AuthScheme, id.User)
	}
	return nil
}
