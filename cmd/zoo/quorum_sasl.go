package main

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/digestmd5"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/peer"
)

// What Apache's quorum SASL passes to Java's DIGEST-MD5 mechanism
// (QuorumAuth.QUORUM_SERVER_PROTOCOL_NAME, QUORUM_SERVER_SASL_DIGEST).
const (
	quorumSASLService = "zookeeper-quorum"
	quorumSASLHost    = "zk-quorum-sasl-md5"
)

// quorumSASL builds quorum authentication from the quorum.auth.* keys and
// the JAAS file, as Apache's QuorumPeerConfig and QuorumPeer do, or
// returns nil when quorum.auth.enableSasl is not true. Apache's rules: a
// require key needs enableSasl, and serverRequireSasl needs
// learnerRequireSasl too (else this server could not join its own
// ensemble); both login sections must exist. Only DIGEST-MD5 sections
// are provided: a Krb5LoginModule there is refused.
func quorumSASL(log *slog.Logger, cfg *config.Config) (*peer.Auth, error) {
	var probs config.Problems
	boolean := func(key string) bool {
		v, ok := cfg.Security[key]
		if !ok || strings.EqualFold(v, "false") {
			return false
		}
		if strings.EqualFold(v, "true") {
			return true
		}
		probs = append(probs, &config.Problem{Pos: cfg.Pos(key), Key: key,
			Err: fmt.Errorf("%w: %q: choose true or false", config.ErrInvalid, v)})
		return false
	}
	enable := boolean("quorum.auth.enableSasl")
	learnerReq := boolean("quorum.auth.learnerRequireSasl")
	serverReq := boolean("quorum.auth.serverRequireSasl")
	conflict := func(key, why string) {
		probs = append(probs, &config.Problem{Pos: cfg.Pos(key), Key: key, Err: fmt.Errorf("%w: %s", config.ErrConflict, why)})
	}
	if learnerReq && !enable {
		conflict("quorum.auth.learnerRequireSasl", "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.learnerRequireSasl")
	}
	if serverReq && !enable {
		conflict("quorum.auth.serverRequireSasl", "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.serverRequireSasl")
	}
	if serverReq && !learnerReq {
		conflict("quorum.auth.serverRequireSasl", "quorum.auth.learnerRequireSasl is disabled, so cannot enable quorum.auth.serverRequireSasl")
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if !enable {
		return nil, nil
	}
	file := cfg.Auth.JaasFile
	if file == "" {
		file = jaasFileFromEnv()
	}
	pos := cfg.Pos("quorum.auth.enableSasl")
	if file == "" {
		return nil, &config.Problem{Pos: pos, Key: "quorum.auth.enableSasl", Err: fmt.Errorf("%w: quorum SASL needs a JAAS file "+
			"(-Djava.security.auth.login.config in SERVER_JVMFLAGS) with %s and %s sections", config.ErrMissing,
			auth.SectionQuorumServer, auth.SectionQuorumLearner)}
	}
	j, err := auth.LoadJAAS(file)
	if err != nil {
		return nil, err
	}
	section := func(key, def string) (*auth.Section, error) {
		name := def
		if v := cfg.Security[key]; v != "" {
			name = v
		}
		s := j.Section(name)
		if s == nil {
			return nil, fmt.Errorf("%s: %w: no %s section (%s)", file, auth.ErrJAAS, name, key)
		}
		if m := s.Module(auth.Krb5LoginModule); m != nil {
			return nil, fmt.Errorf("%s:%d: %w: Kerberos (GSSAPI) quorum authentication is not provided by Zoo; "+
				"use %s; refusing to start weaker than asked", file, m.Line, config.ErrRefused, auth.DigestLoginModule)
		}
		if s.Module(auth.DigestLoginModule) == nil {
			return nil, fmt.Errorf("%s:%d: %w: the %s section has no %s", file, s.Line, auth.ErrJAAS, name, auth.DigestLoginModule)
		}
		return s, nil
	}
	srv, err := section("quorum.auth.server.saslLoginContext", auth.SectionQuorumServer)
	if err != nil {
		return nil, err
	}
	learner, err := section("quorum.auth.learner.saslLoginContext", auth.SectionQuorumLearner)
	if err != nil {
		return nil, err
	}
	user, password, ok := learner.Credentials()
	if !ok {
		return nil, fmt.Errorf("%s:%d: %w: the %s section needs username and password", file, learner.Line, auth.ErrJAAS, learner.Name)
	}
	users := srv.DigestUsers()
	if len(users) == 0 {
		return nil, fmt.Errorf("%s:%d: %w: the %s section has no user_NAME entries: no server could join", file, srv.Line, auth.ErrJAAS, srv.Name)
	}
	log.Info("quorum SASL DIGEST-MD5 on", "file", file, "learner", user, "server_users", len(users),
		"learnerRequireSasl", learnerReq, "serverRequireSasl", serverReq)
	if !serverReq {
		log.Warn("quorum SASL: peers that do not authenticate are let in (quorum.auth.serverRequireSasl=false)")
	}
	return &peer.Auth{
		Learner: func() peer.ClientMechanism {
			return digestmd5.NewClient(user, password, quorumSASLService, quorumSASLHost, rand.Reader)
		},
		Server: func() peer.ServerMechanism {
			return digestmd5.NewServer(quorumSASLService, quorumSASLHost, func(u string) (string, bool) {
				pw, ok := users[u]
				return pw, ok
			}, rand.Reader)
		},
		LearnerRequired: learnerReq,
		ServerRequired:  serverReq,
	}, nil
}
