package cli

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/zk"
)

// Quotas live in the tree, as zkCli keeps them: /zookeeper/quota/<path>
// holds zookeeper_limits (written here) and zookeeper_stats (kept by the
// server). Ref: admin guide, "Quotas".
const (
	quotaRoot  = "/zookeeper/quota"
	limitsNode = "zookeeper_limits"
	statsNode  = "zookeeper_stats"
)

// quotaFields are the limits in the order of the -n -b -N -B options.
var quotaFields = map[byte]string{'n': "count", 'b': "bytes", 'N': "countHardLimit", 'B': "byteHardLimit"}

func quotaDir(p string) string {
	if p == "/" {
		return quotaRoot
	}
	return quotaRoot + p
}

// limits is the content of a zookeeper_limits node (StatsTrack).
type limits map[string]int64

// parseLimits reads StatsTrack's text, "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"
// (the stray "=" is zkCli's). Missing fields are -1: no limit.
func parseLimits(text string) limits {
	l := limits{"count": -1, "bytes": -1, "byteHardLimit": -1, "countHardLimit": -1}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' }) {
		key, value, ok := strings.Cut(f, "=")
		if n, err := strconv.ParseInt(strings.TrimRight(value, "="), 10, 64); ok && err == nil {
			l[key] = n
		}
	}
	return l
}

// String is how zkCli 3.8 writes limits.
func (l limits) String() string {
	return fmt.Sprintf("count=%d,bytes=%d=;byteHardLimit=%d;countHardLimit=%d",
		l["count"], l["bytes"], l["byteHardLimit"], l["countHardLimit"])
}

// quotaFlag is the one -n/-b/-N/-B option given, 0 if none.
func quotaFlag(c *cmdLine) byte {
	for _, f := range []byte("nbNB") {
		if c.has(f) {
			return f
		}
	}
	return 0
}

// cmdSetQuota is "setquota -n|-b|-N|-B val path".
func cmdSetQuota(s *shell, c *cmdLine) error {
	flag := quotaFlag(c)
	val, err := strconv.ParseInt(c.opts[flag], 10, 64)
	if err != nil {
		return failure("NumberFormatException happens when parsing the option value")
	}
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	if err := s.checkQuotaTarget(p); err != nil {
		return err
	}
	return s.writeLimits(p, quotaFields[flag], val, true)
}

// checkQuotaTarget fails unless p exists and no ancestor or descendant
// of p has a quota: quotas do not nest.
func (s *shell) checkQuotaTarget(p string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if ok, _, err := s.client.Exists(ctx, p); err != nil || !ok {
		if err != nil {
			return err
		}
		return fail("%s does not exist.", p)
	}
	for a := path.Dir(p); a != "/"; a = path.Dir(a) {
		if ok, _, err := s.client.Exists(ctx, quotaDir(a)+"/"+limitsNode); err == nil && ok {
			return fail("%s has a parent %s which has a quota", p, a)
		}
	}
	nodes, err := s.subtree(quotaDir(p))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if path.Base(n) == limitsNode && path.Dir(n) != quotaDir(p) {
			return fail("%s has a child %s which has a quota", p, strings.TrimPrefix(path.Dir(n), quotaRoot))
		}
	}
	return nil
}

// warnUsage warns, as zkCli does, about the limits of l that p's
// subtree already exceeds; -1 is no limit.
func (s *shell) warnUsage(p string, l limits) {
	count, bytes, err := s.usage(p)
	if err != nil {
		return
	}
	if over(l["count"], count) || over(l["countHardLimit"], count) {
		s.printf("[Warning]: the count quota you create is less than the existing count:%d\n", count)
	}
	if over(l["bytes"], bytes) || over(l["byteHardLimit"], bytes) {
		s.printf("[Warning]: the bytes quota you create is less than the existing bytes:%d\n", bytes)
	}
}

func over(limit, used int64) bool { return limit >= 0 && limit < used }

// usage counts the nodes of p's subtree, p included, and their bytes of
// data.
func (s *shell) usage(p string) (count, bytes int64, err error) {
	nodes, err := s.subtree(p)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	for _, n := range nodes {
		if ok, st, err := s.client.Exists(ctx, n); err == nil && ok {
			count++
			bytes += int64(st.DataLength)
		}
	}
	return count, bytes, nil
}

// writeLimits sets one limit of p's quota, creating the quota nodes if
// this is p's first; warn says to check the new limits against usage.
func (s *shell) writeLimits(p, field string, val int64, warn bool) error {
	ctx, cancel := s.ctx()
	defer cancel()
	dir := quotaDir(p)
	lp := dir + "/" + limitsNode
	data, st, err := s.client.Get(ctx, lp)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	exists := err == nil
	l := parseLimits(string(data))
	l[field] = val
	if warn {
		s.warnUsage(p, l)
	}
	if exists {
		_, err = s.client.Set(ctx, lp, []byte(l.String()), st.Version)
		return err
	}
	if err := s.createParents(dir); err != nil {
		return err
	}
	if _, _, err := s.client.Create(ctx, lp, []byte(l.String()), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		return err
	}
	_, _, err = s.client.Create(ctx, dir+"/"+statsNode, []byte("count=0,bytes=0"), zk.Persistent, zk.OpenACLUnsafe())
	return err
}

// createParents creates dir and its missing ancestors, without data.
func (s *shell) createParents(dir string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, _, err := s.client.Create(ctx, dir, nil, zk.Persistent, zk.OpenACLUnsafe())
	if errors.Is(err, zk.ErrNoNode) {
		if err := s.createParents(path.Dir(dir)); err != nil {
			return err
		}
		_, _, err = s.client.Create(ctx, dir, nil, zk.Persistent, zk.OpenACLUnsafe())
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// cmdListQuota is "listquota path".
func cmdListQuota(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	lp := quotaDir(p) + "/" + limitsNode
	s.errorf("absolute path is %s\n", lp)
	data, _, err := s.client.Get(ctx, lp)
	if errors.Is(err, zk.ErrNoNode) {
		s.errorf("quota for %s does not exist.\n", p)
		return nil // zkCli reports it but succeeds
	}
	if err != nil {
		return err
	}
	s.printf("Output quota for %s %s\n", p, data)
	stats, _, err := s.client.Get(ctx, quotaDir(p)+"/"+statsNode)
	if err != nil {
		return err
	}
	s.printf("Output stat for %s %s\n", p, stats)
	return nil
}

// cmdDelQuota is "delquota [-n|-b|-N|-B] path": one limit, or the whole
// quota.
func cmdDelQuota(s *shell, c *cmdLine) error {
	p, err := pathArg(c, 0)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if ok, _, err := s.client.Exists(ctx, quotaDir(p)+"/"+limitsNode); err != nil || !ok {
		if err != nil {
			return err
		}
		s.printf("Quota does not exist for %s\n", p)
		return nil // zkCli reports it but succeeds
	}
	if flag := quotaFlag(c); flag != 0 {
		return s.writeLimits(p, quotaFields[flag], -1, false)
	}
	return s.deleteQuota(p)
}

// deleteQuota removes p's quota nodes, then the quota directories left
// empty (zkCli's trimProcQuotas).
func (s *shell) deleteQuota(p string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	dir := quotaDir(p)
	children, _, err := s.client.Children(ctx, dir)
	if err != nil {
		return err
	}
	for _, ch := range children {
		if err := s.client.Delete(ctx, dir+"/"+ch, -1); err != nil {
			return err
		}
	}
	for ; dir != quotaRoot; dir = path.Dir(dir) {
		left, _, err := s.client.Children(ctx, dir)
		if err != nil || len(left) > 0 {
			return err
		}
		if err := s.client.Delete(ctx, dir, -1); err != nil {
			return err
		}
	}
	return nil
}
