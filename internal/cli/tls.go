package cli

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
)

// clientTLS reads a client configuration file (zkCli.sh's
// -client-configuration, Apache's ZKClientConfig keys) and returns the
// TLS configuration it asks for, or nil when zookeeper.client.secure is
// not true. Security settings the client cannot honour are errors.
func clientTLS(path string) (*tls.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	props, err := config.ReadProperties(path, data)
	if err != nil {
		return nil, err
	}
	if err := config.CheckClientProperties(path, props); err != nil {
		return nil, err
	}
	secure := props["zookeeper.client.secure"]
	switch strings.ToLower(secure) {
	case "", "false":
		return nil, nil
	case "true":
	default:
		return nil, fmt.Errorf("%s: zookeeper.client.secure: %q is not true or false", path, secure)
	}
	get := func(k string) (string, bool) { v, ok := props["zookeeper."+k]; return v, ok }
	settings, err := auth.ParseTLS(get, "ssl.")
	if err != nil {
		return nil, fmt.Errorf("%s: zookeeper.%w", path, err)
	}
	// Each server's host name is filled in per connection by zk.
	return settings.ClientConfig("")
}
