package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/zk"
)

// Ref: issue 13, defect 2; go-zookeeper v1.0.4 TestIntegration_Reconfig.
// A reconfig that removes the very server the client is connected to is
// answered, with the new membership, before that server lets the client
// go (Apache replies first): the client learns that its reconfig
// succeeded rather than seeing ConnectionLoss.
func TestReconfigRemovingTheClientsServerReplies(t *testing.T) {
	for _, target := range []string{"follower", "leader"} {
		t.Run(target, func(t *testing.T) {
			ms := startMembers(t, 3, 0, "", func(c *Config) {
				c.ReconfigEnabled = true
				c.SuperDigest = superDigest
			})
			lead := leaderOf(t, ms)
			var via uint64
			for id := range ms {
				if (target == "leader") == (id == lead) {
					via = id
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			su, err := zk.Connect(ctx, ms[via].addr, zk.WithSessionTimeout(4*time.Second),
				zk.WithAuth("digest", []byte("super:test")))
			if err != nil {
				t.Fatal(err)
			}
			defer su.Close()
			// Until the followers have caught up with the new leader, the
			// new configuration has no synced quorum.
			var data []byte
			waitFor(t, 10*time.Second, func() error {
				data, _, err = su.Reconfig(ctx, "", fmt.Sprint(via), "", -1)
				if errors.Is(err, zk.ErrNewConfigNoQuorum) {
					return err
				}
				return nil
			})
			if err != nil {
				t.Fatalf("reconfig removing server %d, the client's (%s): %v", via, target, err)
			}
			m, err := member.Parse(string(data))
			if err != nil {
				t.Fatalf("reply %q: %v", data, err)
			}
			if ids := m.Participants(); slices.Contains(ids, int64(via)) || len(ids) != 2 {
				t.Fatalf("new participants %v; want the two others than %d", ids, via)
			}
		})
	}
}
