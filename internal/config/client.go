package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ReadProperties reads a Java properties file, such as the client
// configuration file zkCli.sh takes with -client-configuration (Apache's
// ZKClientConfig), into a map: keys and values as
// java.util.Properties.load reads them, the last of a duplicated key
// winning. name labels positions in errors.
func ReadProperties(name string, data []byte) (map[string]string, error) {
	props, probs := parseProperties(name, string(data))
	if err := probs.err(); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(props))
	for _, p := range props {
		out[p.key] = p.value
	}
	return out, nil
}

// ClientSSLKeys are the client properties (ZKClientConfig, ClientX509Util)
// that Zoo's client honours, by their names without "zookeeper.".
var ClientSSLKeys = map[string]bool{
	"client.secure": true, "clientCnxnSocket": true,
	"ssl.keyStore.location": true, "ssl.keyStore.password": true, "ssl.keyStore.passwordPath": true,
	"ssl.keyStore.type": true, "ssl.trustStore.location": true, "ssl.trustStore.password": true,
	"ssl.trustStore.passwordPath": true, "ssl.trustStore.type": true, "ssl.protocol": true,
	"ssl.enabledProtocols": true, "ssl.ciphersuites": true, "ssl.hostnameVerification": true,
}

// CheckClientProperties refuses the security properties of a client
// configuration that Zoo's client does not provide (any other
// zookeeper.ssl.*, zookeeper.sasl.*, the JAAS file, ...), unless their
// value asks for nothing, so that a client asked to be secure never
// connects weaker.
func CheckClientProperties(name string, props map[string]string) error {
	var probs Problems
	for _, key := range slices.Sorted(maps.Keys(props)) {
		short, zk := strings.CutPrefix(key, "zookeeper.")
		if zk && ClientSSLKeys[short] {
			continue
		}
		k, found := lookupSecurity(key, func(s source) bool { return s == propOnly })
		if !found && zk {
			k, found = lookupSecurity(short, fromProp)
		}
		if !found || slices.ContainsFunc(k.accept, func(a string) bool { return strings.EqualFold(a, props[key]) }) {
			continue
		}
		probs = append(probs, &Problem{Pos: Pos{File: name}, Key: key,
			Err: fmt.Errorf("%w: the zoo client does not provide this security setting; refusing to connect weaker than asked", ErrRefused)})
	}
	return probs.err()
}
