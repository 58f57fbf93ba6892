package cli

import (
	"fmt"
	"os"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/zk"
)

// jaasFromEnv is the JAAS file zkCli.sh would log in with: the
// -Djava.security.auth.login.config of "$CLIENT_JVMFLAGS $JVMFLAGS".
func jaasFromEnv() string {
	return auth.JAASFileFromFlags(os.Getenv("CLIENT_JVMFLAGS") + " " + os.Getenv("JVMFLAGS"))
}

// saslOptions reads a JAAS file's Client section, as the Java client does
// (zookeeper.sasl.clientconfig's default): a DigestLoginModule with
// username and password logs in with SASL DIGEST-MD5. Without a Client
// section the client goes on without SASL, as the Java client does.
func saslOptions(file string) ([]zk.Option, error) {
	if file == "" {
		return nil, nil
	}
	j, err := auth.LoadJAAS(file)
	if err != nil {
		return nil, err
	}
	sec := j.Section(auth.SectionClient)
	if sec == nil {
		return nil, nil
	}
	if sec.Module(auth.Krb5LoginModule) != nil {
		return nil, fmt.Errorf("%s:%d: the Client section logs in with Kerberos (GSSAPI), which zoo cli does not support yet", file, sec.Line)
	}
	user, password, ok := sec.Credentials()
	if !ok {
		return nil, fmt.Errorf("%s:%d: the Client section has no %s with username and password", file, sec.Line, auth.DigestLoginModule)
	}
	return []zk.Option{zk.WithSASL(user, password)}, nil
}
