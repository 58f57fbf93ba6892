package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

// jaasFileFromEnv reads -Djava.security.auth.login.config from the flags
// zkServer.sh gives java, "$SERVER_JVMFLAGS $JVMFLAGS" (the last one
// wins). The general -D parser will take this over.
func jaasFileFromEnv() string {
	return auth.JAASFileFromFlags(os.Getenv("SERVER_JVMFLAGS") + " " + os.Getenv("JVMFLAGS"))
}

// saslServerConfig sets the server's SASL login and enforcement from the
// JAAS file and zoo.cfg, as Apache's ServerCnxnFactory.configureSaslLogin
// does: a file that does not parse stops the server; a file without a
// Server section leaves SASL off. A Server section that logs in with
// Kerberos stops the server: Zoo does not speak GSSAPI yet, and a server
// that ignored it would accept clients Apache would have authenticated.
func saslServerConfig(log *slog.Logger, c *config.Config, s *server.Config) error {
	a := c.Auth
	s.EnforceAuthSchemes = c.EnforcedSchemes()
	if a.JaasFile == "" {
		a.JaasFile = jaasFileFromEnv()
	}
	if a.JaasFile == "" {
		return nil
	}
	j, err := auth.LoadJAAS(a.JaasFile)
	if err != nil {
		return err
	}
	sec := j.Section(auth.SectionServer)
	if sec == nil {
		log.Warn("JAAS file has no Server section: SASL authentication is off", "file", a.JaasFile)
		return nil
	}
	if m := sec.Module(auth.Krb5LoginModule); m != nil {
		return fmt.Errorf("%s:%d: %w: the Server section logs in with Kerberos (GSSAPI), which Zoo does not support yet",
			a.JaasFile, m.Line, auth.ErrJAAS)
	}
	if sec.Module(auth.DigestLoginModule) == nil {
		return fmt.Errorf("%s:%d: %w: the Server section has no %s", a.JaasFile, sec.Line, auth.ErrJAAS, auth.DigestLoginModule)
	}
	users := sec.DigestUsers()
	if len(users) == 0 && a.SuperPassword == "" {
		log.Warn("JAAS Server section has no user_NAME entries: no client can authenticate with SASL", "file", a.JaasFile)
	}
	s.SASL = &server.SASLConfig{
		Users:         users,
		SuperUser:     a.SuperUser,
		SuperPassword: a.SuperPassword,
		AllowFailed:   a.AllowSASLFailedClients,
		RemoveHost:    a.KerberosRemoveHost,
		RemoveRealm:   a.KerberosRemoveRealm,
	}
	log.Info("SASL DIGEST-MD5 authentication on", "file", a.JaasFile, "users", len(users))
	return nil
}
