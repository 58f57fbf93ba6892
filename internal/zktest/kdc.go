package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Realm is the Kerberos realm of the test KDC.
const Realm = "EXAMPLE.COM"

// KDC is an MIT Kerberos KDC (Debian krb5-kdc) serving Realm on a free
// loopback port, with its database, krb5.conf and keytabs in a directory.
type KDC struct {
	Dir      string
	Krb5Conf string // a krb5.conf naming this KDC, for clients (KRB5_CONFIG, -Djava.security.krb5.conf)
	Addr     string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// StartKDC creates the realm under dir with the given principals (random
// keys; "zookeeper/localhost", "client"), writes a keytab for each
// (Keytab), and starts krb5kdc. It returns ErrUnavailable if the MIT
// tools are not installed (apt-get install krb5-kdc krb5-admin-server).
func StartKDC(dir string, principals ...string) (*KDC, error) {
	var tools [3]string
	for i, name := range []string{"kdb5_util", "kadmin.local", "krb5kdc"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if p, err = exec.LookPath("/usr/sbin/" + name); err != nil {
				return nil, fmt.Errorf("%w: %s: %v (apt-get install krb5-kdc krb5-admin-server)", ErrUnavailable, name, err)
			}
		}
		tools[i] = p
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	k := &KDC{Dir: dir, Krb5Conf: filepath.Join(dir, "krb5.conf"), Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), exited: make(chan struct{})}
	krb5 := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_realm = false
 dns_lookup_kdc = false
 rdns = false
 udp_preference_limit = 1
[realms]
 %[1]s = {
  kdc = %[2]s
 }
`, Realm, k.Addr)
	kdc := fmt.Sprintf(`[kdcdefaults]
 kdc_ports = %[2]d
 kdc_tcp_ports = %[2]d
[realms]
 %[1]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  supported_enctypes = aes256-cts:normal aes128-cts:normal
 }
`, Realm, ports[0], dir)
	if err := os.WriteFile(k.Krb5Conf, []byte(krb5), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kdc.conf"), []byte(kdc), 0o644); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+filepath.Join(dir, "kdc.conf"))
	run := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("zktest: %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run(tools[0], "create", "-s", "-P", "masterpw", "-r", Realm); err != nil {
		return nil, err
	}
	for _, p := range principals {
		if err := run(tools[1], "-r", Realm, "-q", "addprinc -randkey "+p); err != nil {
			return nil, err
		}
		if err := run(tools[1], "-r", Realm, "-q", "ktadd -k "+k.Keytab(p)+" "+p); err != nil {
			return nil, err
		}
	}
	logFile, err := os.Create(filepath.Join(dir, "kdc.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	k.cmd = exec.Command(tools[2], "-n")
	k.cmd.Env = env
	k.cmd.Stdout, k.cmd.Stderr = logFile, logFile
	if err := k.cmd.Start(); err != nil {
		return nil, fmt.Errorf("zktest: start krb5kdc: %w", err)
	}
	go func() {
		_ = k.cmd.Wait()
		close(k.exited)
	}()
	if err := k.waitReady(); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// Keytab is the path of a principal's keytab.
func (k *KDC) Keytab(principal string) string {
	return filepath.Join(k.Dir, strings.ReplaceAll(principal, "/", "_")+".keytab")
}

func (k *KDC) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-k.exited:
			log, _ := os.ReadFile(filepath.Join(k.Dir, "kdc.log"))
			return fmt.Errorf("zktest: krb5kdc exited:\n%s", log)
		default:
		}
		if c, err := net.DialTimeout("tcp", k.Addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond) // polling for the port, bounded by the deadline
	}
	return errors.New("zktest: krb5kdc did not start listening")
}

// Stop kills the KDC and waits for it.
func (k *KDC) Stop() {
	if k.cmd.Process != nil {
		_ = k.cmd.Process.Kill()
	}
	<-k.exited
}
