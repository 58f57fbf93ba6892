package txn

import "testing"

// Ref: Apache's admin guide, "Quotas" (hard limits with enforceQuota): a
// write a hard quota may refuse is checked against the committed tree, so
// it is not prepped while an earlier write is outstanding: the stats do
// not count that one yet (interop's TestHardQuota let a create through on
// an ensemble). Nothing else waits.
func TestSettledHoldsQuotaWritesBehindOutstandingOnes(t *testing.T) {
	h := newHarness(t, PrepConfig{EnforceQuota: true})
	h.mustDo(create("/q", "", 0))
	h.mustDo(create("/free", "", 0))

	// A quota being set: every write waits for it to apply.
	limits := h.prep(create("/zookeeper/quota/q", "", 0))
	if h.p.Settled(create("/free/a", "", 0)) {
		t.Error("a write was settled while a quota was being set")
	}
	h.apply(limits)
	h.mustDo(create("/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;countHardLimit=3", 0))
	h.mustDo(create("/zookeeper/quota/q/zookeeper_stats", "", 0))

	if !h.p.Settled(create("/q/a", "", 0)) {
		t.Error("a write under a quota was held with nothing outstanding")
	}
	a := h.prep(create("/q/a", "", 0))
	for _, req := range []Request{create("/q/b", "", 0), setData("/q", "x", -1)} {
		if h.p.Settled(req) {
			t.Errorf("%v under a quota was settled while /q/a is outstanding", req.Op)
		}
	}
	if !h.p.Settled(create("/free/b", "", 0)) {
		t.Error("a write outside any quota was held")
	}
	h.apply(a)
	if !h.p.Settled(create("/q/b", "", 0)) {
		t.Error("a write under a quota was held once the earlier one applied")
	}
	off := newHarness(t, PrepConfig{})
	off.prep(create("/zookeeper/quota/q", "", 0))
	if !off.p.Settled(create("/q/b", "", 0)) {
		t.Error("held without enforceQuota")
	}
}
