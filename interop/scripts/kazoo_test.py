#!/usr/bin/python3
"""Interop tests: kazoo (Debian python3-kazoo 2.8) against a running server.

    ZK_ADDR=127.0.0.1:2181 /usr/bin/python3 interop/scripts/kazoo_test.py [-v] [-k pattern]

ZK_ADDR may list an ensemble's servers, host:port,host:port,...: clients get
the whole list (and connect to any of them), except where a test needs one
server (the four-letter words, the TCP proxy), which uses the first. A client
that reads what another client wrote calls sync first (catch_up), as it
must with an ensemble, where its server may not have the write yet.

Only /usr/bin/python3 has kazoo (the pyenv python3 on PATH does not). Every
expectation here was checked against Apache ZooKeeper 3.8 (the oracle; start
one with interop/scripts/start-apache.sh), so a failure against Zoo means Zoo
differs from Apache. The server must run with tickTime=$ZK_TICK_TIME (default
2000) and the default min/max session timeouts (2 and 20 ticks), and allow the
four-letter words ruok, srvr, stat, envi, conf, mntr, isro, wchs.

Each test works under its own unique root, is bounded by an alarm
(TEST_TIMEOUT seconds) and waits on events with timeouts, never on sleeps.
The last line of output is "kazoo_test: passed N, failed M" (a different
form from run.sh's total, which is the one CI counts).
"""

import logging
import os
import queue
import re
import signal
import socket
import sys
import threading
import time
import unittest
import uuid

from tcp_proxy import Proxy  # beside this file

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    ConnectionLoss,
    InvalidACLError,
    NoAuthError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.protocol.states import ZnodeStat
from kazoo.security import (
    ACL,
    OPEN_ACL_UNSAFE,
    READ_ACL_UNSAFE,
    Id,
    make_digest_acl,
    make_digest_acl_credential,
)

ADDR = os.environ.get("ZK_ADDR", "127.0.0.1:2181")
ADDRS = ADDR.split(",")
FIRST = ADDRS[0]
# The srvr/stat "Mode" and mntr zk_server_state a server reports.
MODE = r"(leader|follower)" if len(ADDRS) > 1 else r"standalone"
TICK_MS = int(os.environ.get("ZK_TICK_TIME", "2000"))
TEST_TIMEOUT = 60  # seconds, per test, enforced with SIGALRM
WAIT = 15  # seconds, for any single expected event

# Digest credentials the tests use; the cleanup client adds them all so that
# it can list and delete nodes whose ACLs exclude "world".
CREDENTIALS = ["alice:secret", "bob:pw"]


class TestTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise TestTimeout("test exceeded %ds" % TEST_TIMEOUT)


class Base(unittest.TestCase):
    """Starts a client, makes a unique root, and cleans both up."""

    def setUp(self):
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(TEST_TIMEOUT)
        # Cleanups run even when setUp fails part way (tearDown would not).
        self.addCleanup(self._cleanup)
        self.clients = []
        self.proxies = []
        self.root = None
        self.c = self.client()
        self.root = "/kazoo-%d-%s-%s" % (os.getpid(), self._testMethodName, uuid.uuid4().hex[:8])
        self.c.create(self.root)

    def _cleanup(self):
        signal.alarm(20)  # cleanup gets its own bound
        try:
            if self.root is not None:
                cleaner = self.client(auth_data=[("digest", cred) for cred in CREDENTIALS])
                cleaner.delete(self.root, recursive=True)
        finally:
            for p in self.proxies:
                p.close()
            for cl in self.clients:
                try:
                    cl.stop()
                    cl.close()
                except Exception:  # a test may have stopped it already
                    pass
            signal.alarm(0)

    def client(self, addr=None, timeout=10, start=True, **kw):
        kw.setdefault("connection_retry", dict(max_tries=-1, delay=0.05, backoff=2, max_delay=0.5))
        cl = KazooClient(hosts=addr or ADDR, timeout=timeout, **kw)
        self.clients.append(cl)
        if start:
            cl.start(timeout=WAIT)
            self.catch_up(cl)  # it sees the test's root and all set up so far
        return cl

    def catch_up(self, cl):
        """Bring the server cl is connected to up to date with every write
        committed so far (by any client), before cl reads. Ref: programmer's
        guide, "Consistency Guarantees": ZooKeeper does not promise
        simultaneously consistent cross-client views; a client that must
        see the latest calls sync first."""
        cl.sync("/")

    def proxy(self):
        p = Proxy(FIRST)
        self.proxies.append(p)
        return p

    def p(self, *parts):
        return "/".join((self.root,) + parts)

    def wait(self, event, what, timeout=WAIT):
        self.assertTrue(event.wait(timeout), "timed out after %ss waiting for %s" % (timeout, what))

    def when_children(self, path, n):
        """An event set once path has n children (watched, not polled). The
        watching client catches up first, so as not to count children
        another client has already deleted."""
        event = threading.Event()
        self.catch_up(self.c)

        def changed(children):
            if len(children) == n:
                event.set()
            # Returning None keeps the ChildrenWatch going (False stops it).

        self.c.ChildrenWatch(path)(changed)
        return event

    def fence(self, watcher_client, other_client):
        """Return once every watch event the server sent watcher_client
        before now has been delivered to its callbacks: kazoo runs watch
        callbacks one at a time, in arrival order, so a fresh watch fired
        after the changes under test is delivered after their events.
        The fence node is a sibling of the test root, so that it fires no
        watch set under the root."""
        path = "%s-fence-%s" % (self.root, uuid.uuid4().hex[:8])
        fired = threading.Event()
        watcher_client.exists(path, watch=lambda e: fired.set())
        other_client.create(path, ephemeral=True)  # gone with the session
        self.wait(fired, "the fence watch on " + path)

    def assertFreshStat(self, st, data_len, ephemeral_owner=0):
        self.assertIsInstance(st, ZnodeStat)
        self.assertEqual((st.version, st.cversion, st.aversion), (0, 0, 0))
        self.assertEqual(st.czxid, st.mzxid)
        self.assertEqual(st.czxid, st.pzxid)
        self.assertEqual(st.ctime, st.mtime)
        self.assertEqual(st.ephemeralOwner, ephemeral_owner)
        self.assertEqual(st.dataLength, data_len)
        self.assertEqual(st.numChildren, 0)


class Events:
    """Collects watch events; wait_for(n) blocks until n have arrived."""

    def __init__(self):
        self.cond = threading.Condition()
        self.events = []

    def __call__(self, event):
        with self.cond:
            self.events.append((event.type, event.path))
            self.cond.notify_all()

    def wait_for(self, n, timeout=WAIT):
        with self.cond:
            self.cond.wait_for(lambda: len(self.events) >= n, timeout)
            return list(self.events)


class TestNodes(Base):
    # Ref: programmer's guide, "ZooKeeper Stat Structure" and "Data Access".
    def test_create_get_set_delete_with_stats(self):
        c, a = self.c, self.p("a")
        before = int(time.time() * 1000)
        self.assertEqual(c.create(a, b"hello"), a)
        after = int(time.time() * 1000)
        data, st = c.get(a)
        self.assertEqual(data, b"hello")
        self.assertFreshStat(st, 5)
        self.assertLessEqual(before - 1000, st.ctime)
        self.assertLessEqual(st.ctime, after + 1000)
        self.assertGreaterEqual(c.last_zxid, st.czxid)

        st2 = c.set(a, b"bye!")
        self.assertEqual((st2.version, st2.dataLength, st2.czxid), (1, 4, st.czxid))
        self.assertGreater(st2.mzxid, st.mzxid)
        self.assertEqual(st2.pzxid, st.pzxid)  # pzxid follows children only
        self.assertGreaterEqual(st2.mtime, st2.ctime)
        self.assertEqual(c.get(a), (b"bye!", st2))
        self.assertRaises(BadVersionError, c.set, a, b"x", version=0)
        self.assertEqual(c.set(a, b"x", version=1).version, 2)
        self.assertEqual(c.exists(a).version, 2)

        self.assertRaises(NodeExistsError, c.create, a)
        none = self.p("none")
        self.assertIsNone(c.exists(none))
        self.assertRaises(NoNodeError, c.get, none)
        self.assertRaises(NoNodeError, c.set, none, b"")
        self.assertRaises(NoNodeError, c.delete, none)
        self.assertRaises(NoNodeError, c.get_children, none)
        self.assertRaises(NoNodeError, c.create, none + "/child")

        parent = c.exists(self.root)
        self.assertEqual((parent.numChildren, parent.cversion, parent.pzxid), (1, 1, st.czxid))
        c.create(a + "/b")
        self.assertRaises(NotEmptyError, c.delete, a)
        self.assertRaises(BadVersionError, c.delete, a + "/b", version=5)
        c.delete(a + "/b", version=0)
        c.delete(a)
        self.assertIsNone(c.exists(a))
        parent2 = c.exists(self.root)
        self.assertEqual((parent2.numChildren, parent2.cversion), (0, 2))
        self.assertGreater(parent2.pzxid, parent.pzxid)
        self.assertEqual(parent2.mzxid, parent.mzxid)  # children don't touch mzxid
        self.assertEqual(c.sync(self.root), self.root)

    def test_children_makepath_and_data_sizes(self):
        c = self.c
        deep = self.p("x", "y", "z")
        self.assertEqual(c.create(deep, b"d", makepath=True), deep)
        self.assertEqual(c.get(self.p("x"))[0], b"")
        for name in ("b", "a", "c"):
            c.create(self.p("x", name))
        self.assertEqual(sorted(c.get_children(self.p("x"))), ["a", "b", "c", "y"])
        children, st = c.get_children(self.p("x"), include_data=True)
        self.assertEqual(sorted(children), ["a", "b", "c", "y"])
        self.assertEqual((st.numChildren, st.cversion), (4, 4))
        self.assertEqual(c.get_children(deep), [])
        c.ensure_path(self.p("x", "y"))  # already there: no error
        c.ensure_path(self.p("new", "path"))
        self.assertIsNotNone(c.exists(self.p("new", "path")))

        big = os.urandom(1000 * 1000)  # under jute.maxbuffer (1 MiB - 1)
        c.create(self.p("big"), big)
        data, st = c.get(self.p("big"))
        self.assertEqual((data, st.dataLength), (big, len(big)))
        binary = bytes(range(256))
        c.create(self.p("bin"), binary)
        self.assertEqual(c.get(self.p("bin"))[0], binary)

    def test_oversized_request_drops_connection(self):
        # Apache closes the connection on a packet over jute.maxbuffer
        # (1 MiB - 1 by default); the session survives the reconnect.
        c = self.c
        sid = c.client_id[0]
        with self.assertRaises(ConnectionLoss):
            c.create(self.p("huge"), b"x" * (1024 * 1024 + 10))
        self.assertIsNone(c.retry(c.exists, self.p("huge")))
        self.assertEqual(c.client_id[0], sid)

    def test_sequential_names_count_creates(self):
        # The suffix is the parent's count of child creations: deletes do
        # not advance it, although they do advance the parent's cversion
        # (Apache reports cversion = creates + deletes).
        c, s = self.c, self.p("s")
        c.create(s)
        self.assertEqual(c.create(s + "/q-", sequence=True), s + "/q-0000000000")
        self.assertEqual(c.create(s + "/q-", b"v", sequence=True), s + "/q-0000000001")
        c.delete(s + "/q-0000000001")
        self.assertEqual(c.exists(s).cversion, 3)
        self.assertEqual(c.create(s + "/p-", sequence=True), s + "/p-0000000002")
        c.create(s + "/plain")
        c.delete(s + "/plain")
        self.assertEqual(c.create(s + "/q-", sequence=True), s + "/q-0000000004")
        self.assertEqual(c.create(s + "/n", sequence=True), s + "/n0000000005")
        st = c.exists(s)
        self.assertEqual((st.cversion, st.numChildren), (8, 4))
        self.assertEqual(sorted(c.get_children(s)), ["n0000000005", "p-0000000002", "q-0000000000", "q-0000000004"])
        # A different parent has its own counter.
        self.assertEqual(c.create(self.p("t", "x"), sequence=True, makepath=True), self.p("t", "x0000000000"))
        es = c.create(s + "/e-", ephemeral=True, sequence=True)
        self.assertEqual(es, s + "/e-0000000006")
        self.assertEqual(c.exists(es).ephemeralOwner, c.client_id[0])

    def test_ephemerals_vanish_when_the_session_closes(self):
        # Ref: programmer's guide, "Ephemeral Nodes".
        c2 = self.client()
        e = self.p("e")
        c2.create(e, b"mine", ephemeral=True)
        st = c2.exists(e)
        self.assertFreshStat(st, 4, ephemeral_owner=c2.client_id[0])
        self.assertRaises(NoChildrenForEphemeralsError, c2.create, e + "/child")
        self.assertRaises(NoChildrenForEphemeralsError, self.c.create, e + "/child")
        gone = threading.Event()
        events = []
        self.catch_up(self.c)
        self.c.exists(e, watch=lambda ev: (events.append((ev.type, ev.path)), gone.set()))
        c2.stop()
        self.wait(gone, "the ephemeral's deletion")
        self.assertEqual(events, [("DELETED", e)])
        self.assertIsNone(self.c.exists(e))
        self.assertEqual(self.c.exists(self.root).cversion, 2)


class TestWatches(Base):
    # Ref: programmer's guide, "ZooKeeper Watches".
    def test_data_watch_fires_once(self):
        c, c2, a = self.c, self.client(), self.p("a")
        c.create(a, b"0")
        ev = Events()
        self.assertEqual(c.get(a, watch=ev)[0], b"0")
        c2.set(a, b"1")
        c2.set(a, b"2")
        self.assertEqual(ev.wait_for(1), [("CHANGED", a)])
        self.fence(c, c2)
        self.assertEqual(ev.events, [("CHANGED", a)])  # one-shot
        c.get(a, watch=ev)
        c2.delete(a)
        self.assertEqual(ev.wait_for(2), [("CHANGED", a), ("DELETED", a)])

    def test_exists_watch_sees_create_and_delete(self):
        c, c2, a = self.c, self.client(), self.p("a")
        ev = Events()
        self.assertIsNone(c.exists(a, watch=ev))
        c2.create(a)
        self.assertEqual(ev.wait_for(1), [("CREATED", a)])
        self.assertIsNotNone(c.exists(a, watch=ev))
        c2.delete(a)
        self.assertEqual(ev.wait_for(2), [("CREATED", a), ("DELETED", a)])

    def test_child_watch(self):
        c, c2 = self.c, self.client()
        kid = self.p("kid")
        ev = Events()
        self.assertEqual(c.get_children(self.root, watch=ev), [])
        c2.create(kid)
        self.assertEqual(ev.wait_for(1), [("CHILD", self.root)])
        c.get_children(self.root, watch=ev)
        c2.set(kid, b"data")  # a child's data is not the parent's children
        self.fence(c, c2)
        self.assertEqual(ev.events, [("CHILD", self.root)])
        c2.delete(kid)
        self.assertEqual(ev.wait_for(2), [("CHILD", self.root)] * 2)
        c2.create(kid)
        # A delete fires the child's own watch, then the parent's.
        order = Events()
        self.catch_up(c)
        c.get(kid, watch=order)
        c.get_children(self.root, watch=order)
        c2.delete(kid)
        self.assertEqual(order.wait_for(2), [("DELETED", kid), ("CHILD", self.root)])
        # A create fires the new node's exists watch, then the parent's.
        order2 = Events()
        c.exists(kid, watch=order2)
        c.get_children(self.root, watch=order2)
        c2.create(kid)
        self.assertEqual(order2.wait_for(2), [("CREATED", kid), ("CHILD", self.root)])

    def test_datawatch_and_childrenwatch_recipes(self):
        c, c2, a = self.c, self.client(), self.p("a")
        c.create(a, b"v0")
        seen = queue.Queue()

        @c.DataWatch(a)
        def data_changed(data, stat):
            seen.put(("data", data, stat.version if stat else None))

        kids = queue.Queue()

        @c.ChildrenWatch(self.root)
        def children_changed(children):
            kids.put(sorted(children))

        self.assertEqual(seen.get(timeout=WAIT), ("data", b"v0", 0))
        self.assertEqual(kids.get(timeout=WAIT), ["a"])
        c2.set(a, b"v1")
        self.assertEqual(seen.get(timeout=WAIT), ("data", b"v1", 1))
        c2.create(self.p("b"))
        self.assertEqual(kids.get(timeout=WAIT), ["a", "b"])
        c2.delete(a)
        self.assertEqual(seen.get(timeout=WAIT), ("data", None, None))
        self.assertEqual(kids.get(timeout=WAIT), ["b"])
        c2.create(a, b"v2")
        self.assertEqual(seen.get(timeout=WAIT), ("data", b"v2", 0))
        self.assertEqual(kids.get(timeout=WAIT), ["a", "b"])


class TestTransactions(Base):
    def test_commit_returns_per_op_results(self):
        c, a = self.c, self.p("a")
        t = c.transaction()
        t.check(self.root, 0)
        t.create(a, b"x")
        t.check(a, 0)  # sees the create earlier in the same transaction
        t.set_data(a, b"yy")
        t.create(self.p("s-"), b"", sequence=True)
        t.create(self.p("gone"))
        t.delete(self.p("gone"))
        res = t.commit()
        self.assertEqual(len(res), 7)
        self.assertEqual(res[0:3], [True, a, True])
        self.assertIsInstance(res[3], ZnodeStat)
        self.assertEqual((res[3].version, res[3].dataLength), (1, 2))
        self.assertEqual(res[4:], [self.p("s-0000000001"), self.p("gone"), True])
        data, st = c.get(a)
        self.assertEqual((data, st.version), (b"yy", 1))
        # Every op of the transaction carries the same zxid.
        self.assertEqual(st.czxid, st.mzxid)
        self.assertEqual(c.exists(self.p("s-0000000001")).czxid, st.czxid)
        self.assertEqual(c.exists(self.root).pzxid, st.czxid)
        self.assertIsNone(c.exists(self.p("gone")))

    def test_failed_transaction_applies_nothing(self):
        c = self.c
        before = c.exists(self.root)
        t = c.transaction()
        t.create(self.p("b"))
        t.check(self.root, 99)
        t.set_data(self.p("none"), b"z")
        t.delete(self.p("zz"))
        res = t.commit()
        # Ops before the failure report RolledBack, the failing op its own
        # error, ops after it RuntimeInconsistency.
        self.assertEqual([type(r) for r in res],
                         [RolledBackError, BadVersionError, RuntimeInconsistency, RuntimeInconsistency])
        self.assertIsNone(c.exists(self.p("b")))
        self.assertEqual(c.exists(self.root), before)

        t = c.transaction()
        t.create(self.p("c"))
        t.create(self.p("c"))
        t.create(self.p("d"))
        res = t.commit()
        self.assertEqual([type(r) for r in res], [RolledBackError, NodeExistsError, RuntimeInconsistency])
        self.assertEqual(c.get_children(self.root), [])

        # ACLs are checked against the transaction's own pending state.
        t = c.transaction()
        t.create(self.p("ro"), b"", acl=READ_ACL_UNSAFE)
        t.set_data(self.p("ro"), b"no")
        res = t.commit()
        self.assertEqual([type(r) for r in res], [RolledBackError, NoAuthError])
        self.assertEqual(c.get_children(self.root), [])
        self.assertEqual(c.exists(self.root), before)

    def test_transaction_with_ephemeral(self):
        c2 = self.client()
        t = c2.transaction()
        t.create(self.p("e"), b"", ephemeral=True)
        t.create(self.p("q-"), b"", ephemeral=True, sequence=True)
        self.assertEqual(t.commit(), [self.p("e"), self.p("q-0000000001")])
        self.catch_up(self.c)
        self.assertEqual(self.c.exists(self.p("e")).ephemeralOwner, c2.client_id[0])
        c2.stop()
        self.catch_up(self.c)
        self.assertEqual(self.c.get_children(self.root), [])


class TestACL(Base):
    # Ref: programmer's guide, "ZooKeeper access control using ACLs".
    def test_digest_acl(self):
        c, sec = self.c, self.p("sec")
        acl = make_digest_acl("alice", "secret", all=True)
        self.assertEqual(acl.id, Id("digest", make_digest_acl_credential("alice", "secret")))
        self.assertEqual(acl.id.id, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=")
        c.create(sec, b"s", acl=[acl])  # creating needs CREATE on the parent only
        self.assertRaises(NoAuthError, c.get, sec)
        self.assertRaises(NoAuthError, c.set, sec, b"x")
        self.assertRaises(NoAuthError, c.get_children, sec)
        self.assertRaises(NoAuthError, c.get_acls, sec)  # needs READ or ADMIN
        self.assertRaises(NoAuthError, c.create, sec + "/kid")
        self.assertEqual(c.exists(sec).dataLength, 1)  # exists needs nothing

        alice = self.client(auth_data=[("digest", "alice:secret")])
        self.assertEqual(alice.get(sec)[0], b"s")
        acls, st = alice.get_acls(sec)
        self.assertEqual((acls, st.aversion), ([acl], 0))

        wrong = self.client()
        self.assertTrue(wrong.add_auth("digest", "alice:wrong"))  # accepted, but useless
        self.assertRaises(NoAuthError, wrong.get, sec)
        c.add_auth("digest", "alice:secret")
        self.assertEqual(c.get(sec)[0], b"s")

        self.assertRaises(BadVersionError, alice.set_acls, sec, OPEN_ACL_UNSAFE, version=3)
        self.assertEqual(alice.set_acls(sec, OPEN_ACL_UNSAFE, version=0).aversion, 1)
        self.catch_up(wrong)
        self.assertEqual(wrong.get(sec)[0], b"s")
        self.assertEqual(wrong.get_acls(sec), (OPEN_ACL_UNSAFE, wrong.exists(sec)))

    def test_get_acls_masks_digests_without_admin(self):
        ro = self.p("ro")
        self.c.create(ro, b"r", acl=[make_digest_acl("bob", "pw", read=True)])
        bob = self.client(auth_data=[("digest", "bob:pw")])
        self.assertEqual(bob.get(ro)[0], b"r")
        acls, _ = bob.get_acls(ro)
        self.assertEqual(acls, [ACL(1, Id("digest", "bob:x"))])
        self.assertRaises(NoAuthError, bob.set_acls, ro, OPEN_ACL_UNSAFE)

    def test_auth_ip_world_and_invalid_acls(self):
        c = self.c
        auth_acl = [ACL(31, Id("auth", ""))]
        self.assertRaises(InvalidACLError, c.create, self.p("x"), acl=auth_acl)  # no auth yet
        self.assertRaises(InvalidACLError, c.create, self.p("x"), acl=[ACL(31, Id("bogus", "x"))])
        self.assertRaises(InvalidACLError, c.create, self.p("x"), acl=[ACL(31, Id("digest", "nocolon"))])
        self.assertIsNone(c.exists(self.p("x")))

        alice = self.client(auth_data=[("digest", "alice:secret")])
        alice.create(self.p("x"), acl=auth_acl)
        self.assertEqual(alice.get_acls(self.p("x"))[0], [make_digest_acl("alice", "secret", all=True)])

        c.create(self.p("ip"), b"i", acl=[ACL(31, Id("ip", "127.0.0.1"))])
        self.assertEqual(c.get(self.p("ip"))[0], b"i")
        c.create(self.p("ipnet"), b"n", acl=[ACL(31, Id("ip", "10.0.0.0/8"))])
        self.assertRaises(NoAuthError, c.get, self.p("ipnet"))
        c.delete(self.p("ipnet"))  # nobody here could list it at cleanup

        c.create(self.p("wr"), b"w", acl=READ_ACL_UNSAFE)
        self.assertEqual(c.get(self.p("wr"))[0], b"w")
        self.assertRaises(NoAuthError, c.set, self.p("wr"), b"")
        self.assertRaises(NoAuthError, c.create, self.p("wr", "kid"))
        c.delete(self.p("wr"))  # delete needs DELETE on the parent, not the node

    def test_unknown_auth_scheme_fails_the_session(self):
        # Apache answers AuthFailed and closes the connection; kazoo then
        # considers the session lost.
        c2 = self.client()
        states = []
        c2.add_listener(states.append)
        with self.assertRaises(AuthFailedError):
            c2.add_auth("bogus", "x")
        self.assertIn(KazooState.LOST, states)


class TestRecipes(Base):
    def test_lock_mutual_exclusion(self):
        counter = self.p("counter")
        self.c.create(counter, b"0")
        clients = [self.client(), self.client()]
        threads_per_client, iters = 2, 10
        holder = []  # who is inside the critical section
        violations = []
        errors = []

        def worker(cl, name):
            lock = cl.Lock(self.p("lock"), name)
            try:
                for _ in range(iters):
                    if not lock.acquire(timeout=WAIT):
                        errors.append("%s: acquire timed out" % name)
                        return
                    try:
                        if holder:
                            violations.append((name, list(holder)))
                        holder.append(name)
                        data, st = cl.get(counter)
                        cl.set(counter, b"%d" % (int(data) + 1), version=st.version)
                        holder.remove(name)
                    finally:
                        lock.release()
            except Exception as e:  # reported below, not lost in the thread
                errors.append("%s: %r" % (name, e))

        threads = [threading.Thread(target=worker, args=(cl, "c%d-t%d" % (i, j)))
                   for i, cl in enumerate(clients) for j in range(threads_per_client)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TEST_TIMEOUT)
        self.assertEqual(errors, [])
        self.assertEqual(violations, [])
        total = len(clients) * threads_per_client * iters
        self.catch_up(self.c)
        self.assertEqual(self.c.get(counter)[0], b"%d" % total)
        self.assertEqual(self.c.get_children(self.p("lock")), [])

    def test_lock_passes_on_when_holder_session_closes(self):
        c1, c2 = self.client(), self.client()
        l1, l2 = c1.Lock(self.p("lock"), "one"), c2.Lock(self.p("lock"), "two")
        self.assertTrue(l1.acquire(timeout=WAIT))
        self.assertFalse(l2.acquire(blocking=False))
        got = threading.Event()
        t = threading.Thread(target=lambda: l2.acquire(timeout=WAIT) and got.set())
        t.start()
        contenders = self.when_children(self.p("lock"), 2)
        self.wait(contenders, "both lock contenders")
        self.assertFalse(got.is_set())
        self.assertEqual(l2.contenders(), ["one", "two"])
        c1.stop()  # the holder's ephemeral lock node goes with its session
        self.wait(got, "the second client to get the lock")
        t.join(WAIT)
        self.assertEqual(l2.contenders(), ["two"])
        l2.release()

    def test_election(self):
        c1, c2 = self.client(), self.client()
        path = self.p("election")
        leading, lk = [], threading.Lock()
        led = {n: threading.Event() for n in ("one", "two")}
        stop = {n: threading.Event() for n in ("one", "two")}
        overlaps = []

        def lead(name):
            with lk:
                if leading:
                    overlaps.append((name, list(leading)))
                leading.append(name)
            led[name].set()
            stop[name].wait(TEST_TIMEOUT)
            with lk:
                leading.remove(name)

        e1, e2 = c1.Election(path, "one"), c2.Election(path, "two")
        t1 = threading.Thread(target=e1.run, args=(lead, "one"))
        t1.start()
        self.wait(led["one"], "the first contender to lead")
        both = self.when_children(path, 2)
        t2 = threading.Thread(target=e2.run, args=(lead, "two"))
        t2.start()
        self.wait(both, "the second contender to join")
        self.assertFalse(led["two"].is_set())
        self.assertEqual(e2.contenders(), ["one", "two"])
        stop["one"].set()  # the leader steps down
        self.wait(led["two"], "the second contender to lead")
        t1.join(WAIT)
        self.assertFalse(t1.is_alive())
        self.assertEqual(e1.contenders(), ["two"])
        stop["two"].set()
        t2.join(WAIT)
        self.assertEqual(overlaps, [])

    def test_counter_queue_and_barrier(self):
        c1, c2 = self.client(), self.client()
        path = self.p("counter")
        c1.Counter(path)  # creates it at 0

        def add(cl):
            counter = cl.Counter(path)
            for _ in range(10):
                counter += 1

        threads = [threading.Thread(target=add, args=(cl,)) for cl in (c1, c2, c1, c2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TEST_TIMEOUT)
        self.catch_up(c1)
        self.assertEqual(c1.Counter(path).value, 40)
        counter = c2.Counter(path)
        counter -= 5
        self.assertEqual(counter.value, 35)

        q1, q2 = c1.Queue(self.p("queue")), c2.Queue(self.p("queue"))
        for item in (b"1", b"2", b"3"):
            q1.put(item)
        q1.put(b"urgent", priority=1)  # lower number first
        self.catch_up(c2)
        self.assertEqual(len(q2), 4)
        self.assertEqual([q2.get() for _ in range(4)], [b"urgent", b"1", b"2", b"3"])
        self.assertIsNone(q2.get())

        b1 = c1.Barrier(self.p("barrier"))
        b1.create()
        self.catch_up(c2)
        passed = threading.Event()
        t = threading.Thread(target=lambda: c2.Barrier(self.p("barrier")).wait(WAIT) and passed.set())
        t.start()
        self.assertFalse(passed.is_set())
        b1.remove()
        self.wait(passed, "the barrier to lift")
        t.join(WAIT)


class TestServer(Base):
    def test_four_letter_words(self):
        # kazoo sends a command to the server it is connected to: pin it to
        # one, to know which.
        c = self.client(addr=FIRST)
        self.assertEqual(c.command(b"ruok"), "imok")
        srvr = c.command(b"srvr")
        for pat in (r"^Zookeeper version: \d+\.\d+\.\d+", r"^Latency min/avg/max: \d+/[\d.]+/\d+$",
                    r"^Received: \d+$", r"^Sent: \d+$", r"^Connections: \d+$", r"^Outstanding: \d+$",
                    r"^Zxid: 0x[0-9a-f]+$", r"^Mode: %s$" % MODE, r"^Node count: \d+$"):
            self.assertRegex(srvr, re.compile(pat, re.M))
        zxid = int(re.search(r"^Zxid: 0x([0-9a-f]+)$", srvr, re.M).group(1), 16)
        self.assertGreaterEqual(zxid, c.last_zxid)
        stat = c.command(b"stat")
        self.assertRegex(stat, re.compile(r"^Clients:$", re.M))
        self.assertRegex(stat, re.compile(r"^ /127\.0\.0\.1:\d+\[\d+\]\(queued=\d+,recved=\d+,sent=\d+", re.M))
        self.assertRegex(stat, re.compile(r"^Mode: %s$" % MODE, re.M))
        self.assertRegex(c.command(b"envi"), re.compile(r"^zookeeper\.version=\d+\.\d+\.\d+", re.M))
        conf = dict(line.split("=", 1) for line in c.command(b"conf").splitlines() if "=" in line)
        self.assertEqual(conf.get("clientPort"), FIRST.rsplit(":", 1)[1])
        self.assertEqual(conf.get("tickTime"), str(TICK_MS))
        self.assertEqual(conf.get("minSessionTimeout"), str(2 * TICK_MS))
        self.assertEqual(conf.get("maxSessionTimeout"), str(20 * TICK_MS))
        mntr = dict(line.split("\t", 1) for line in c.command(b"mntr").splitlines() if "\t" in line)
        self.assertRegex(mntr.get("zk_server_state", ""), "^%s$" % MODE)
        for key in ("zk_version", "zk_avg_latency", "zk_max_latency", "zk_min_latency",
                    "zk_packets_received", "zk_packets_sent", "zk_num_alive_connections",
                    "zk_outstanding_requests", "zk_znode_count", "zk_watch_count",
                    "zk_ephemerals_count", "zk_approximate_data_size"):
            self.assertIn(key, mntr)
        self.assertGreaterEqual(int(mntr["zk_znode_count"]), 2)
        self.assertGreaterEqual(int(mntr["zk_num_alive_connections"]), 1)
        self.assertEqual(c.command(b"isro"), "rw")
        c.exists(self.p("watched"), watch=lambda e: None)  # a watch on this server
        self.assertRegex(c.command(b"wchs"),
                         r"^\d+ connections watching \d+ paths\nTotal watches:[1-9]\d*\n?$")

    def test_server_version(self):
        version = self.c.server_version()  # parsed from envi
        self.assertEqual(len(version), 3)
        self.assertTrue(all(isinstance(v, int) for v in version))
        # Apache 3.8 says (3, 8, 0); a drop-in replacement must claim a 3.x
        # new enough for the features clients probe for.
        self.assertGreaterEqual(version, (3, 5, 0))
        self.assertLess(version, (4, 0, 0))

    def test_session_timeout_is_negotiated(self):
        # Ref: programmer's guide, "ZooKeeper Sessions": the server clamps
        # the requested timeout to [2, 20] ticks.
        for asked, want in ((1, 2 * TICK_MS), (10, 10000), (100, 20 * TICK_MS)):
            got = []
            logger = logging.getLogger("kazoo_test.negotiation.%d" % asked)
            logger.setLevel(1)
            logger.propagate = False
            handler = logging.Handler()
            handler.emit = lambda rec: got.extend(
                re.findall(r"negotiated session timeout: (\d+)", rec.getMessage()))
            logger.addHandler(handler)
            cl = self.client(timeout=asked, logger=logger)
            cl.stop()
            self.assertEqual(got, [str(want)], "asked for %ds" % asked)

    def test_wrong_session_password_gets_a_new_session(self):
        c = self.c
        c.create(self.p("e"), ephemeral=True)
        sid = c.client_id[0]
        other = self.client(client_id=(sid, b"\0" * 16))
        self.assertNotEqual(other.client_id[0], sid)
        self.assertEqual(c.exists(self.p("e")).ephemeralOwner, sid)  # untouched

    def test_reconnect_keeps_session_and_ephemerals(self):
        # Ref: programmer's guide, "ZooKeeper Sessions": a client that
        # reconnects within the session timeout keeps its session. (kazoo
        # 2.8 drops its watches on disconnect, firing NONE events, rather
        # than re-setting them with SetWatches.)
        proxy = self.proxy()
        states = []
        connected = threading.Event()
        suspended = threading.Event()

        def listener(state):
            states.append(state)
            (connected if state == KazooState.CONNECTED else suspended).set()

        c = self.client(addr=proxy.addr)
        c.add_listener(listener)
        sid = c.client_id[0]
        c.create(self.p("e"), ephemeral=True)
        c.create(self.p("a"), b"0")
        ev = Events()
        c.get(self.p("a"), watch=ev)
        proxy.cut(refuse=True)
        self.wait(suspended, "the client to notice the cut")
        self.assertEqual(ev.wait_for(1), [("NONE", None)])
        self.c.set(self.p("a"), b"changed while away")
        connected.clear()
        proxy.resume()
        self.wait(connected, "the client to reconnect")
        self.assertEqual(c.client_id[0], sid)
        self.assertEqual(states, [KazooState.SUSPENDED, KazooState.CONNECTED])
        self.assertEqual(c.exists(self.p("e")).ephemeralOwner, sid)
        self.catch_up(c)
        self.assertEqual(c.get(self.p("a"), watch=ev)[0], b"changed while away")
        self.c.set(self.p("a"), b"after")
        self.assertEqual(ev.wait_for(2), [("NONE", None), ("CHANGED", self.p("a"))])

    def test_session_expires_when_the_client_goes_silent(self):
        # Ref: programmer's guide, "ZooKeeper Sessions". The client asks for
        # the minimum timeout (2 ticks) so expiry comes quickly.
        proxy = self.proxy()
        lost = threading.Event()
        c = self.client(addr=proxy.addr, timeout=1)
        c.add_listener(lambda s: s == KazooState.LOST and lost.set())
        sid = c.client_id[0]
        e = self.p("e")
        # The server last heard from the client no earlier than this create
        # was sent; the session may not expire sooner than its timeout after.
        heard_at = time.monotonic()
        c.create(e, ephemeral=True)
        gone = threading.Event()
        self.catch_up(self.c)
        self.c.exists(e, watch=lambda ev: gone.set())
        proxy.cut(refuse=True)
        # Apache expires a session between its timeout and timeout + 1 tick
        # after the last time it heard from the client.
        self.wait(gone, "the silent session's ephemeral to go", timeout=(2 * TICK_MS + TICK_MS) / 1000 + 10)
        self.assertGreaterEqual(time.monotonic() - heard_at, 2 * TICK_MS / 1000 * 0.9)
        self.assertIsNone(self.c.exists(e))
        proxy.resume()  # the client comes back to find its session expired
        self.wait(lost, "the client to see its session expire")
        c.retry(c.exists, self.root)  # kazoo starts a new session
        self.assertNotEqual(c.client_id[0], sid)


def setUpModule():
    """Fail fast, with one clear error, if a server in ZK_ADDR does not answer."""
    for addr in ADDRS:
        host, port = addr.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=5) as s:
                s.sendall(b"ruok")
                s.settimeout(5)
                answer = s.recv(16)
        except OSError as e:
            raise ConnectionError("no server answers at %s: %s" % (addr, e)) from None
        if answer != b"imok":
            raise RuntimeError("%s answered ruok with %r, want b'imok'" % (addr, answer))


class TimedResult(unittest.TextTestResult):
    successes = 0

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.successes += 1
        if self.showAll:
            self.stream.write("  (%.2fs)\n" % (time.monotonic() - self._started))


def main():
    level = os.environ.get("KAZOO_LOG", "CRITICAL").upper()
    logging.basicConfig(level=getattr(logging, level, logging.CRITICAL),
                        format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    runner = unittest.TextTestRunner(stream=sys.stdout, resultclass=TimedResult, verbosity=2)
    prog = unittest.main(module=__name__, testRunner=runner, exit=False)
    r = prog.result
    # Every test is meant to run: a skip counts as a failure.
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses) + len(r.skipped)
    passed = r.successes
    print("kazoo_test: passed %d, failed %d" % (passed, failed))
    sys.exit(0 if failed == 0 and passed > 0 else 1)


if __name__ == "__main__":
    main()
