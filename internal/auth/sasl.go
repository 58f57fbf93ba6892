package auth

import "strings"

// ShortName is the name Apache's SaslServerCallbackHandler gives an
// authenticated principal: service[/host][@REALM], with the host dropped
// when removeHost (kerberos.removeHostFromPrincipal) and the realm when
// removeRealm (kerberos.removeRealmFromPrincipal). A DIGEST-MD5 user name
// has neither and is kept as it is. Apache's auth_to_local rules are not
// applied: with its DEFAULT rule the result is the same for principals
// of the default realm.
func ShortName(principal string, removeHost, removeRealm bool) string {
	primary, realm, hasRealm := strings.Cut(principal, "@")
	service, host, hasHost := strings.Cut(primary, "/")
	name := service
	if hasHost && !removeHost {
		name += "/" + host
	}
	if hasRealm && !removeRealm {
		name += "@" + realm
	}
	return name
}
