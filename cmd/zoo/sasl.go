package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/jcmturner/gokrb5/v8/keytab"

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
// Server section leaves SASL off. A Server section with Krb5LoginModule
// makes the mechanism GSSAPI, with DigestLoginModule DIGEST-MD5.
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
		return kerberosServerConfig(log, c, s, a.JaasFile, m, sec)
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

// kerberosServerConfig sets up SASL GSSAPI from a Krb5LoginModule line:
// the server's keys come from its keyTab (useKeyTab=true), for its
// principal. What Zoo cannot do (a ticket cache instead of a keytab)
// stops the server.
func kerberosServerConfig(log *slog.Logger, c *config.Config, s *server.Config, file string, m *auth.LoginModule, sec *auth.Section) error {
	k, _ := sec.Kerberos()
	if !k.UseKeyTab || k.KeyTab == "" || k.Principal == "" {
		return fmt.Errorf("%s:%d: %w: Krb5LoginModule needs useKeyTab=true, keyTab and principal: Zoo reads its keys from a keytab", file, m.Line, auth.ErrJAAS)
	}
	kt, err := keytab.Load(k.KeyTab)
	if err != nil {
		return fmt.Errorf("%s:%d: %w: keyTab %s: %v", file, m.Line, auth.ErrJAAS, k.KeyTab, err)
	}
	a := c.Auth
	s.SASL = &server.SASLConfig{
		SuperUser:   a.SuperUser,
		AllowFailed: a.AllowSASLFailedClients,
		RemoveHost:  a.KerberosRemoveHost,
		RemoveRealm: a.KerberosRemoveRealm,
		Keytab:      kt,
		Principal:   k.Principal,
	}
	log.Info("SASL GSSAPI (Kerberos) authentication on", "file", file, "principal", k.Principal, "keytab", k.KeyTab)
	return nil
}
