package main

import (
	"log/slog"
	"os/user"
	"path/filepath"
	"time"

	"github.com/zoohq/zoo/internal/audit"
	"github.com/zoohq/zoo/internal/config"
)

// openAudit opens the audit log when audit.enable is true: audit.file, or
// zookeeper_audit.log in dataLogDir, rotated past audit.maxFileSize (10 MiB)
// with ten backups, as Apache's logback.xml sets its audit appender. It
// records serverStart; the returned function records serverStop and
// closes the file.
func openAudit(log *slog.Logger, c *config.Config) (*audit.Logger, func(), error) {
	if !c.Auth.Audit {
		return nil, func() {}, nil
	}
	path := c.Auth.AuditFile
	if path == "" {
		path = filepath.Join(c.DataLogDir, config.DefaultAuditFile)
	}
	size := c.Auth.AuditMaxFileSize
	if size == 0 {
		size = config.DefaultAuditMaxFileSize
	}
	who := osUser()
	al, err := audit.Open(audit.Config{Path: path, MaxSize: size, Logger: log, ServerUser: who})
	if err != nil {
		return nil, nil, err
	}
	al.Log(audit.Event{Time: time.Now(), User: who, Operation: audit.OpServerStart, Result: audit.Success})
	log.Info("audit log on", "file", path, "max_size", size)
	return al, func() {
		al.Log(audit.Event{Time: time.Now(), User: who, Operation: audit.OpServerStop, Result: audit.Invoked})
		_ = al.Close()
		if n := al.Dropped(); n > 0 {
			log.Warn("audit: records were dropped because the audit file could not keep up", "dropped", n)
		}
	}, nil
}

// osUser is the user the server runs as (Java's user.name).
func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
