package recipe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zoohq/zoo/zk"
)

// ServiceType is Curator's ServiceType: how an instance's node lives.
type ServiceType string

const (
	ServiceDynamic           ServiceType = "DYNAMIC"            // ephemeral: goes with the session
	ServiceDynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL" // ephemeral sequential
	ServiceStatic            ServiceType = "STATIC"             // persistent
	ServicePermanent         ServiceType = "PERMANENT"          // persistent
)

// UriPart is one part of a UriSpec: a literal, or a variable ("{port}").
type UriPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// UriSpec is Curator's UriSpec, a URI template such as
// "{scheme}://foo.com:{port}".
type UriSpec struct {
	Parts []UriPart `json:"parts"`
}

// ParseUriSpec splits a template into its parts as Curator's UriSpec
// does: "{name}" is a variable, the rest literals.
func ParseUriSpec(s string) *UriSpec {
	spec := &UriSpec{Parts: []UriPart{}}
	for s != "" {
		i := strings.IndexByte(s, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i:], '}')
		}
		if j < 0 {
			spec.Parts = append(spec.Parts, UriPart{Value: s})
			break
		}
		j += i
		if i > 0 {
			spec.Parts = append(spec.Parts, UriPart{Value: s[:i]})
		}
		spec.Parts = append(spec.Parts, UriPart{Value: s[i+1 : j], Variable: true})
		s = s[j+1:]
	}
	return spec
}

// ServiceInstance is Curator's ServiceInstance, and its JSON is byte for
// byte what Curator's JsonInstanceSerializer writes in its default
// (compatible) mode: the fields in Curator's order, absent values as
// null, no "enabled" field. Payload is the payload's JSON as Curator
// writes it (with Jackson's type information, as
// {"@class":"com.example.Details",...}), or null.
type ServiceInstance struct {
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             string          `json:"address"`
	Port                *int            `json:"port"`
	SslPort             *int            `json:"sslPort"`
	Payload             json.RawMessage `json:"payload"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	ServiceType         ServiceType     `json:"serviceType"`
	UriSpec             *UriSpec        `json:"uriSpec"`
	// Enabled is written only when set; Curator writes it only in its
	// non-compatible mode, and reads it as true when absent.
	Enabled *bool `json:"enabled,omitempty"`
}

// NewServiceInstance returns a dynamic instance of service name at
// address:port, with a random id and the current time, as Curator's
// ServiceInstanceBuilder makes one.
func NewServiceInstance(name, address string, port int) ServiceInstance {
	return ServiceInstance{Name: name, ID: zk.NewProtectedID(), Address: address, Port: &port,
		RegistrationTimeUTC: time.Now().UnixMilli(), ServiceType: ServiceDynamic}
}

// MarshalInstance writes inst as Curator's JsonInstanceSerializer does.
func MarshalInstance(inst ServiceInstance) ([]byte, error) {
	if len(inst.Payload) == 0 {
		inst.Payload = json.RawMessage("null")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Jackson does not escape <, > and &
	if err := enc.Encode(inst); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ErrBadInstance means a node does not hold a ServiceInstance.
var ErrBadInstance = errors.New("recipe: node does not hold a service instance")

// UnmarshalInstance reads an instance written by Curator or
// MarshalInstance.
func UnmarshalInstance(data []byte) (ServiceInstance, error) {
	var inst ServiceInstance
	if err := json.Unmarshal(data, &inst); err != nil {
		return ServiceInstance{}, fmt.Errorf("%w: %w", ErrBadInstance, err)
	}
	if inst.Name == "" || inst.ID == "" {
		return ServiceInstance{}, fmt.Errorf("%w: no name or id", ErrBadInstance)
	}
	if string(inst.Payload) == "null" {
		inst.Payload = nil
	}
	return inst, nil
}

// IsEnabled reports the instance's enabled flag (true when absent).
func (s ServiceInstance) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// ServiceDiscovery is Curator's ServiceDiscovery: instances of a service
// are nodes basePath/<service name>/<instance id> holding the instance's
// JSON, so that Go and Java (curator-x-discovery) processes find each
// other's instances.
type ServiceDiscovery struct {
	c    *zk.Client
	base string
	acl  []zk.ACL

	mu         sync.Mutex
	registered map[string]ServiceInstance // by node path
}

// NewServiceDiscovery returns a discovery under basePath.
func NewServiceDiscovery(c *zk.Client, basePath string, acl []zk.ACL) *ServiceDiscovery {
	return &ServiceDiscovery{c: c, base: basePath, acl: orOpen(acl), registered: map[string]ServiceInstance{}}
}

func (d *ServiceDiscovery) instancePath(name, id string) string {
	return d.base + "/" + name + "/" + id
}

// RegisterService publishes inst. A node left under the same id (by a
// former session) is replaced, so that watchers see the change, as
// Curator does.
func (d *ServiceDiscovery) RegisterService(ctx context.Context, inst ServiceInstance) error {
	data, err := MarshalInstance(inst)
	if err != nil {
		return err
	}
	p := d.instancePath(inst.Name, inst.ID)
	mode := zk.Persistent
	switch inst.ServiceType {
	case ServiceDynamic:
		mode = zk.Ephemeral
	case ServiceDynamicSequential:
		mode = zk.EphemeralSequential
	}
	if err := d.c.CreateParents(ctx, p, d.acl); err != nil {
		return err
	}
	for range 2 {
		_, _, err = d.c.Create(ctx, p, data, mode, d.acl)
		if errors.Is(err, zk.ErrNodeExists) {
			if derr := deleteNode(ctx, d.c, p); derr != nil {
				return derr
			}
			continue
		}
		break
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.registered[p] = inst
	d.mu.Unlock()
	return nil
}

// UpdateService replaces the JSON of a registered instance.
func (d *ServiceDiscovery) UpdateService(ctx context.Context, inst ServiceInstance) error {
	data, err := MarshalInstance(inst)
	if err != nil {
		return err
	}
	p := d.instancePath(inst.Name, inst.ID)
	if _, err := d.c.Set(ctx, p, data, -1); err != nil {
		return err
	}
	d.mu.Lock()
	d.registered[p] = inst
	d.mu.Unlock()
	return nil
}

// UnregisterService removes inst.
func (d *ServiceDiscovery) UnregisterService(ctx context.Context, inst ServiceInstance) error {
	p := d.instancePath(inst.Name, inst.ID)
	d.mu.Lock()
	delete(d.registered, p)
	d.mu.Unlock()
	return deleteNode(ctx, d.c, p)
}

// QueryForNames lists the services that have (or had) instances.
func (d *ServiceDiscovery) QueryForNames(ctx context.Context) ([]string, error) {
	names, err := children(ctx, d.c, d.base)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return names, err
}

// QueryForInstances returns the instances of service name. Nodes that do
// not hold an instance are skipped.
func (d *ServiceDiscovery) QueryForInstances(ctx context.Context, name string) ([]ServiceInstance, error) {
	ids, err := children(ctx, d.c, d.base+"/"+name)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ServiceInstance
	for _, id := range ids {
		inst, ok, err := d.QueryForInstance(ctx, name, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, inst)
		}
	}
	return out, nil
}

// QueryForInstance returns one instance, and false if it does not exist
// or does not hold an instance.
func (d *ServiceDiscovery) QueryForInstance(ctx context.Context, name, id string) (ServiceInstance, bool, error) {
	data, err := retry(ctx, func() ([]byte, error) {
		b, _, err := d.c.Get(ctx, d.instancePath(name, id))
		return b, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return ServiceInstance{}, false, nil
	}
	if err != nil {
		return ServiceInstance{}, false, err
	}
	inst, err := UnmarshalInstance(data)
	if err != nil {
		return ServiceInstance{}, false, nil
	}
	return inst, true, nil
}

// Close unregisters every instance this discovery registered.
func (d *ServiceDiscovery) Close(ctx context.Context) error {
	d.mu.Lock()
	paths := make([]string, 0, len(d.registered))
	for p := range d.registered {
		paths = append(paths, p)
	}
	d.registered = map[string]ServiceInstance{}
	d.mu.Unlock()
	var errs []error
	for _, p := range paths {
		errs = append(errs, deleteNode(ctx, d.c, p))
	}
	return errors.Join(errs...)
}
