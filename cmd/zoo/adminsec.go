package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/admin"
	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
)

// adminFlag reads a boolean admin.* security key. Apache reads them with
// Boolean.getBoolean, so anything but "true" is false there; a value that
// is neither true nor false is refused here instead, since reading
// "forceHttps=yes" as false would serve plain HTTP to someone who asked
// for HTTPS.
func adminFlag(cfg *config.Config, key string) (bool, error) {
	v, ok := cfg.Security[key]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &config.Problem{Pos: cfg.Pos(key), Key: key, Err: fmt.Errorf("%w: %q is not true or false", config.ErrInvalid, v)}
}

// adminHTTPS builds the AdminServer's TLS as Apache 3.9's JettyAdminServer
// does: only when admin.forceHttps or admin.portUnification is true, from
// the ssl.quorum.* key and trust stores (Apache's QuorumX509Util, not the
// client port's ssl.*), requiring a client certificate only with
// admin.needClientAuth. nil serves plain HTTP.
func adminHTTPS(log *slog.Logger, cfg *config.Config) (*admin.HTTPS, error) {
	force, err := adminFlag(cfg, "admin.forceHttps")
	if err != nil {
		return nil, err
	}
	unified, err := adminFlag(cfg, "admin.portUnification")
	if err != nil {
		return nil, err
	}
	need, err := adminFlag(cfg, "admin.needClientAuth")
	if err != nil {
		return nil, err
	}
	if !force && !unified {
		if need {
			// Asked for client certificates on a port that has no TLS:
			// Apache ignores it; Zoo will not serve weaker than asked.
			return nil, &config.Problem{Pos: cfg.Pos("admin.needClientAuth"), Key: "admin.needClientAuth",
				Err: fmt.Errorf("%w: needs admin.forceHttps=true or admin.portUnification=true (the AdminServer serves plain HTTP otherwise)", config.ErrInvalid)}
		}
		return nil, nil
	}
	get := func(k string) (string, bool) { v, ok := cfg.Security[k]; return v, ok }
	settings, err := auth.ParseTLS(get, "ssl.quorum.")
	if err != nil {
		return nil, settingProblems(cfg, err)
	}
	settings.ClientAuth = tls.NoClientCert // Jetty asks for none unless needClientAuth
	if need {
		if settings.TrustStore.Path == "" {
			log.Warn("config: admin.needClientAuth without ssl.quorum.trustStore.location: client certificates are checked against the system's roots")
		}
		settings.ClientAuth = tls.RequireAndVerifyClientCert
	}
	tc, err := settings.ServerConfig()
	if err != nil {
		return nil, settingProblems(cfg, err)
	}
	return &admin.HTTPS{Config: tc, Unified: unified && !force}, nil
}

// adminAuth is how the protected commands authenticate: the digest
// provider with superDigest, ip, and x509 when its provider is registered.
func adminAuth(cfg *config.Config, srv *server.Server) *admin.Auth {
	return &admin.Auth{
		SuperDigest:   cfg.SuperDigest,
		X509:          x509Enabled(cfg),
		X509SuperUser: cfg.Security["X509AuthenticationProvider.superUser"],
		RootACL:       srv.RootACL,
	}
}

// adminSnapshot is the snapshot command: an Apache snapshot of the applied
// state, staged in dataDir (or the system's temp dir without one), at
// most one per admin.rateLimiterIntervalInMS; nil (503, as Apache) with
// admin.snapshot.enabled=false.
func adminSnapshot(log *slog.Logger, cfg *config.Config, srv *server.Server) http.Handler {
	if cfg.AdminSnapshotDisabled {
		return nil
	}
	return admin.SnapshotHandler(admin.SnapshotConfig{
		Write:    srv.WriteApacheSnapshot,
		TempDir:  cfg.DataDir,
		Interval: time.Duration(cfg.AdminRateLimiterInterval) * time.Millisecond,
		Logger:   log,
	})
}

// adminRestore is the restore command: the snapshot in the body replaces
// the database through the log (server.Restore), at most one per
// admin.rateLimiterIntervalInMS; nil (503, as Apache) with
// admin.restore.enabled=false.
func adminRestore(log *slog.Logger, cfg *config.Config, srv *server.Server) http.Handler {
	if cfg.AdminRestoreDisabled {
		return nil
	}
	return admin.RestoreHandler(admin.RestoreConfig{
		Restore: func(ctx context.Context, r io.Reader) (int64, error) {
			zxid, err := srv.Restore(ctx, r)
			switch {
			case errors.Is(err, server.ErrBadSnapshot):
				err = fmt.Errorf("%w: %w", admin.ErrBadRestore, err)
			case errors.Is(err, server.ErrRestoreTooLarge):
				err = fmt.Errorf("%w: %w (restore it offline with zoo restore)", admin.ErrRestoreTooLarge, err)
			}
			return zxid, err
		},
		Interval: time.Duration(cfg.AdminRateLimiterInterval) * time.Millisecond,
		Logger:   log,
	})
}
