package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

// certReloadInterval is how often client.certReload looks at the stores.
const certReloadInterval = time.Second

// clientListener is one client port: plaintext (sec nil), TLS, or both
// (sec.Unified).
type clientListener struct {
	ln  net.Listener
	sec *server.Secure
}

// clientTLS builds the client ports' TLS from the ssl.* settings, or
// returns nil when neither secureClientPort nor client.portUnification
// asks for TLS. Errors are config problems at the line of the setting.
func clientTLS(log *slog.Logger, cfg *config.Config) (*auth.ServerTLS, *server.Secure, error) {
	unified := strings.EqualFold(cfg.Security["client.portUnification"], "true")
	if cfg.SecureClientPort == 0 && !unified {
		for k := range cfg.Security {
			if strings.HasPrefix(k, "ssl.") {
				log.Warn("config: TLS setting has no effect without secureClientPort or client.portUnification=true",
					"key", k, "at", cfg.Pos(k).String())
			}
		}
		return nil, nil, nil
	}
	get := func(k string) (string, bool) { v, ok := cfg.Security[k]; return v, ok }
	settings, err := auth.ParseTLS(get, "ssl.")
	if err != nil {
		return nil, nil, settingProblems(cfg, err)
	}
	st, err := auth.NewServerTLS(settings, log)
	if err != nil {
		return nil, nil, settingProblems(cfg, err)
	}
	if strings.EqualFold(cfg.Security["client.certReload"], "true") {
		st.Watch(certReloadInterval)
	}
	sec := &server.Secure{
		TLS:              st.Config(),
		HandshakeTimeout: settings.HandshakeTimeout,
		X509:             x509Enabled(cfg),
		X509SuperUser:    cfg.Security["X509AuthenticationProvider.superUser"],
	}
	if !sec.X509 && settings.ClientAuth != 0 {
		log.Warn("config: clients presenting a certificate will be closed, as in Apache: no x509 auth provider "+
			"(set authProvider.x509="+config.X509Provider+")", "ssl.clientAuth", cfg.Security["ssl.clientAuth"])
	}
	return st, sec, nil
}

// x509Enabled: an authProvider.N names X509AuthenticationProvider, or
// secureClientPort is set, for which Apache's configureSSLAuth registers
// it when nothing else is.
func x509Enabled(cfg *config.Config) bool {
	if cfg.SecureClientPort != 0 {
		return true
	}
	for k, v := range cfg.Security {
		if strings.HasPrefix(k, "authProvider.") && v == config.X509Provider {
			return true
		}
	}
	return false
}

// settingProblems turns auth's errors into config problems at the line
// of the setting they name.
func settingProblems(cfg *config.Config, err error) error {
	var ps config.Problems
	for _, e := range unjoin(err) {
		var se *auth.SettingError
		if errors.As(e, &se) {
			ps = append(ps, &config.Problem{Pos: cfg.Pos(se.Key), Key: se.Key, Err: se.Err})
		} else {
			ps = append(ps, &config.Problem{Pos: cfg.Pos("secureClientPort"), Key: "ssl", Err: e})
		}
	}
	return ps
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// listenClients opens the client ports: clientPort (unified when
// client.portUnification=true) and secureClientPort.
func listenClients(cfg *config.Config, sec *server.Secure) ([]clientListener, error) {
	var out []clientListener
	fail := func(err error) ([]clientListener, error) {
		for _, l := range out {
			l.ln.Close()
		}
		return nil, err
	}
	if cfg.ClientPort != 0 {
		ln, err := net.Listen("tcp", cfg.ClientAddr())
		if err != nil {
			return fail(err)
		}
		l := clientListener{ln: ln}
		if sec != nil && strings.EqualFold(cfg.Security["client.portUnification"], "true") {
			u := *sec
			u.Unified = true
			l.sec = &u
		}
		out = append(out, l)
	}
	if cfg.SecureClientPort != 0 {
		ln, err := net.Listen("tcp", cfg.SecureClientAddr())
		if err != nil {
			return fail(err)
		}
		out = append(out, clientListener{ln: ln, sec: sec})
	}
	return out, nil
}

// quorumTLS builds the quorum's mutual TLS from the ssl.quorum.* settings
// when sslQuorum=true or portUnification=true (whose quorum port takes
// TLS peers too, as Apache's UnifiedServerSocket does with the quorum
// stores), or returns nil.
func quorumTLS(log *slog.Logger, cfg *config.Config) (*auth.QuorumTLS, error) {
	on := cfg.Security["sslQuorum"]
	unified, err := quorumPortUnification(cfg)
	if err != nil {
		return nil, err
	}
	if unified && (on == "" || strings.EqualFold(on, "false")) {
		on = "true" // the stores are needed all the same
	}
	switch strings.ToLower(on) {
	case "", "false":
		adminTLS := strings.EqualFold(cfg.Security["admin.forceHttps"], "true") ||
			strings.EqualFold(cfg.Security["admin.portUnification"], "true") // the AdminServer uses them
		for k := range cfg.Security {
			if strings.HasPrefix(k, "ssl.quorum.") && !adminTLS {
				log.Warn("config: quorum TLS setting has no effect without sslQuorum=true", "key", k, "at", cfg.Pos(k).String())
			}
		}
		return nil, nil
	case "true":
	default:
		return nil, &config.Problem{Pos: cfg.Pos("sslQuorum"), Key: "sslQuorum", Err: fmt.Errorf("%w: %q is not true or false", config.ErrInvalid, on)}
	}
	get := func(k string) (string, bool) { v, ok := cfg.Security[k]; return v, ok }
	settings, err := auth.ParseTLS(get, "ssl.quorum.")
	if err != nil {
		return nil, settingProblems(cfg, err)
	}
	// Apache's QuorumX509Util checks the dialling server's address too,
	// unless ssl.quorum.clientHostnameVerification=false.
	clientVerify := !strings.EqualFold(cfg.Security["ssl.quorum.clientHostnameVerification"], "false")
	q, err := auth.NewQuorumTLS(settings, clientVerify, log)
	if err != nil {
		return nil, settingProblems(cfg, err)
	}
	if reload := cfg.Security["sslQuorumReloadCertFiles"]; strings.EqualFold(reload, "true") {
		q.Watch(certReloadInterval)
		log.Info("quorum TLS: key and trust stores reloaded when their files change (sslQuorumReloadCertFiles=true)")
	} else if reload != "" && !strings.EqualFold(reload, "false") {
		q.Close()
		return nil, &config.Problem{Pos: cfg.Pos("sslQuorumReloadCertFiles"), Key: "sslQuorumReloadCertFiles",
			Err: fmt.Errorf("%w: %q is not true or false", config.ErrInvalid, reload)}
	}
	return q, nil
}

// quorumPortUnification reads portUnification, which QuorumPeerConfig
// parses as a boolean.
func quorumPortUnification(cfg *config.Config) (bool, error) {
	switch v := cfg.Security["portUnification"]; strings.ToLower(v) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, &config.Problem{Pos: cfg.Pos("portUnification"), Key: "portUnification",
			Err: fmt.Errorf("%w: %q is not true or false", config.ErrInvalid, v)}
	}
}

// quorumListener wraps the quorum port as sslQuorum and portUnification
// say, and returns the dialler: TLS when sslQuorum=true, plaintext (nil)
// otherwise, even on a unified port, which is what lets an ensemble
// switch one member at a time.
func quorumListener(log *slog.Logger, cfg *config.Config, q *auth.QuorumTLS, ln net.Listener) (net.Listener, func(context.Context, string) (net.Conn, error)) {
	if q == nil {
		return ln, nil
	}
	unified, _ := quorumPortUnification(cfg) // checked by quorumTLS
	ssl := strings.EqualFold(cfg.Security["sslQuorum"], "true")
	var dial func(context.Context, string) (net.Conn, error)
	if ssl {
		dial = q.Dial
	}
	if !unified {
		log.Info("quorum TLS: mutual TLS between the servers (sslQuorum=true)")
		return tls.NewListener(ln, q.Listen), dial
	}
	out := "plaintext"
	if ssl {
		out = "TLS"
	}
	log.Warn("quorum port accepts plaintext peers beside TLS ones (portUnification=true): for a rolling switch to "+
		"sslQuorum only; finish it with portUnification=false", "dials", out)
	return q.UnifiedListener(ln), dial
}
