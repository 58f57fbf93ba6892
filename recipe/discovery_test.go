package recipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// What Curator 5.4's JsonInstanceSerializer wrote for an instance built
// as CuratorPeer.java's "register" builds one.
const curatorInstanceJSON = `{"name":"svc","id":"i1","address":"10.0.0.1","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true}]}}`

func TestServiceInstanceJSON(t *testing.T) {
	port := 8080
	inst := ServiceInstance{Name: "svc", ID: "i1", Address: "10.0.0.1", Port: &port, RegistrationTimeUTC: 1700000000000,
		ServiceType: ServiceDynamic, UriSpec: ParseUriSpec("{scheme}://foo.com:{port}")}
	b, err := MarshalInstance(inst)
	if err != nil || string(b) != curatorInstanceJSON {
		t.Fatalf("MarshalInstance = %s, %v\nwant %s", b, err, curatorInstanceJSON)
	}
	back, err := UnmarshalInstance(b)
	if err != nil || !reflect.DeepEqual(back, inst) {
		t.Fatalf("UnmarshalInstance = %+v, %v", back, err)
	}
	withEnabled := `{"name":"svc","id":"i2","address":null,"port":null,"sslPort":null,"payload":{"@class":"x.Y","a":1},"registrationTimeUTC":0,"serviceType":"STATIC","uriSpec":null,"enabled":false}`
	e, err := UnmarshalInstance([]byte(withEnabled))
	if err != nil || e.IsEnabled() || string(e.Payload) != `{"@class":"x.Y","a":1}` {
		t.Fatalf("UnmarshalInstance(enabled=false) = %+v, %v", e, err)
	}
	for _, bad := range []string{"", "[]", `{"name":"x"}`, "{"} {
		if _, err := UnmarshalInstance([]byte(bad)); !errors.Is(err, ErrBadInstance) {
			t.Errorf("UnmarshalInstance(%q) = %v, want ErrBadInstance", bad, err)
		}
	}
}

func FuzzUnmarshalInstance(f *testing.F) {
	f.Add([]byte(curatorInstanceJSON))
	f.Add([]byte(`{"name":"a","id":"b","payload":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := UnmarshalInstance(data)
		if err != nil {
			return
		}
		if _, err := MarshalInstance(inst); err != nil && json.Valid(inst.Payload) {
			t.Fatalf("an instance read could not be written: %v", err)
		}
	})
}

func TestServiceDiscovery(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, base := testCtx(t), testRoot(t)+"/services"
		c := newClient(t)
		d := NewServiceDiscovery(c, base, nil)
		a, b := NewServiceInstance("api", "10.0.0.1", 80), NewServiceInstance("api", "10.0.0.2", 80)
		for _, inst := range []ServiceInstance{a, b} {
			if err := d.RegisterService(ctx, inst); err != nil {
				t.Fatal(err)
			}
		}
		q := NewServiceDiscovery(newClient(t), base, nil)
		names, err := q.QueryForNames(ctx)
		if err != nil || fmt.Sprint(names) != "[api]" {
			t.Fatalf("names %v, %v", names, err)
		}
		insts, err := q.QueryForInstances(ctx, "api")
		if err != nil || len(insts) != 2 {
			t.Fatalf("instances %v, %v", insts, err)
		}
		a.Address = "10.0.0.9"
		if err := d.UpdateService(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := q.QueryForInstance(ctx, "api", a.ID); err != nil || !ok || got.Address != "10.0.0.9" {
			t.Fatalf("QueryForInstance = %+v, %v, %v", got, ok, err)
		}
		if err := d.UnregisterService(ctx, b); err != nil {
			t.Fatal(err)
		}
		// Dynamic instances are ephemeral: they go with the session.
		_ = c.Close()
		if !pollFor(ctx, func() bool { i, err := q.QueryForInstances(ctx, "api"); return err == nil && len(i) == 0 }) {
			t.Fatal("instances outlived their session")
		}
	})
}
