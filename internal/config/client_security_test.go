package config

import (
	"errors"
	"testing"
)

// TestClientPropertiesRevocation: a client configuration that asks the
// zoo client to check revocation (which it does not) is refused; the same
// keys set to false are accepted, as before revocation was honoured on
// the server.
func TestClientPropertiesRevocation(t *testing.T) {
	for _, key := range []string{"zookeeper.ssl.crl", "zookeeper.ssl.ocsp", "com.sun.net.ssl.checkRevocation",
		"ocsp.enable", "zookeeper.ssl.quorum.crl"} {
		err := CheckClientProperties("client.properties", map[string]string{key: "true"})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s=true: %v", key, err)
		}
		if err := CheckClientProperties("client.properties", map[string]string{key: "false"}); err != nil {
			t.Errorf("%s=false: %v", key, err)
		}
	}
}
