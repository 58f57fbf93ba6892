package replica

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zoohq/zoo/internal/vfs"
)

// ErrForeignData means a data directory holds files Zoo will not start on:
// Apache ZooKeeper's, files it does not know, or snapshots without the log
// that recovery needs. Starting anyway would serve an empty tree from a
// non-empty directory (DESIGN decision 14), so the server refuses and the
// error says what it found and what to run.
var ErrForeignData = errors.New("replica: the data directory holds data Zoo cannot start from")

// apacheName matches the files of Apache's version-2 directory (and the
// same files put directly in a dataDir).
var apacheName = regexp.MustCompile(`^(snapshot|log)\.[0-9a-fA-F]+(\.gz|\.snappy)?$|^acceptedEpoch$|^currentEpoch$`)

// checkDataDirs refuses a log or snapshot directory (or their parents,
// the dataDir and dataLogDir of zoo.cfg) that holds data Zoo would
// otherwise ignore: it runs before recovery, which would treat a
// directory without a log as fresh and start empty.
func checkDataDirs(fs vfs.FS, logDir, snapDir string) error {
	var errs []error
	for _, parent := range uniq(filepath.Dir(logDir), filepath.Dir(snapDir)) {
		errs = append(errs, checkParent(fs, parent))
	}
	// Either kind in either directory: dataDir and dataLogDir may be one.
	errs = append(errs, checkKnown(fs, logDir, isZooFile))
	if snapDir != logDir {
		errs = append(errs, checkKnown(fs, snapDir, isZooFile))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return checkSnapshotsHaveLog(fs, logDir, snapDir)
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// checkParent looks for Apache's data in a dataDir: a version-2
// directory, or its files.
func checkParent(fs vfs.FS, dir string) error {
	names, err := fs.List(dir)
	if err != nil {
		return nil // no directory yet: nothing in it
	}
	var found []string
	for _, n := range names {
		if n == "version-2" || apacheName.MatchString(n) {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s holds Apache ZooKeeper data (%s); Zoo does not read it in place: "+
		"convert it with `zoo import %s NEW_ZOO_DATADIR` and point dataDir at NEW_ZOO_DATADIR",
		ErrForeignData, dir, strings.Join(found, ", "), dir)
}

// checkKnown fails if dir holds a file that is not one of Zoo's.
func checkKnown(fs vfs.FS, dir string, known func(string) bool) error {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	var unknown []string
	for _, n := range names {
		if !known(n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	hint := "move them away if they are not Zoo's"
	if slices.ContainsFunc(unknown, apacheName.MatchString) {
		hint = fmt.Sprintf("they look like Apache ZooKeeper's: convert them with `zoo import %s NEW_ZOO_DATADIR`", dir)
	}
	return fmt.Errorf("%w: %s holds files Zoo cannot read (%s); %s",
		ErrForeignData, dir, strings.Join(unknown, ", "), hint)
}

var (
	walFile  = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}\.wal(\.tmp|\.broken)?$`)
	snapFile = regexp.MustCompile(`^snap\.[0-9a-f]{16}(\.tmp)?$`)
)

func isZooFile(n string) bool {
	return walFile.MatchString(n) || snapFile.MatchString(n) || n == seqFloorFile || n == seqFloorFile+".tmp"
}

// checkSnapshotsHaveLog refuses snapshots without a log: the log holds
// the commit point of every snapshot and what came after it, so a
// snapshot alone (a log directory lost or pointed elsewhere) is not a
// state to serve, and recovery would start empty beside it.
func checkSnapshotsHaveLog(fs vfs.FS, logDir, snapDir string) error {
	snaps, _ := fs.List(snapDir)
	snaps = slices.DeleteFunc(snaps, func(n string) bool { return strings.HasSuffix(n, ".tmp") })
	if len(snaps) == 0 {
		return nil
	}
	logs, _ := fs.List(logDir)
	if slices.ContainsFunc(logs, func(n string) bool { return strings.HasSuffix(n, ".wal") }) {
		return nil
	}
	return fmt.Errorf("%w: %s holds %d snapshot(s) (newest %s) but %s holds no log: "+
		"the log is missing (is dataLogDir set as when they were written?); "+
		"restore it, or move the snapshots away to start empty",
		ErrForeignData, snapDir, len(snaps), snaps[len(snaps)-1], logDir)
}
