// Package auth holds what a Zoo server needs to authenticate clients the
// way Apache ZooKeeper does: JAAS login configuration files (jaas*.go) and
// what the server does with SASL logins (sasl.go); the DIGEST-MD5
// mechanism itself is in the digestmd5 sub-package, which the zk client
// shares.
//
// The cores are pure: parsers take bytes and return values, the SASL
// server is a state machine fed tokens. Only LoadJAAS reads a file.
package auth

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrJAAS marks a JAAS file that does not parse or does not say what a
// server needs (no Server section, a module without options, ...).
var ErrJAAS = errors.New("auth: bad JAAS configuration")

// JAAS login module classes Zoo understands.
const (
	DigestLoginModule = "org.apache.zookeeper.server.auth.DigestLoginModule"
	Krb5LoginModule   = "com.sun.security.auth.module.Krb5LoginModule"
)

// JAAS section names Apache looks up (zookeeper.sasl.serverconfig,
// zookeeper.sasl.clientconfig and the quorum SASL sections' defaults).
const (
	SectionServer        = "Server"
	SectionClient        = "Client"
	SectionQuorumServer  = "QuorumServer"
	SectionQuorumLearner = "QuorumLearner"
)

// JAAS is a parsed login configuration file (the format of Java's
// com.sun.security.auth.login.ConfigFile):
//
//	Server {
//	    org.apache.zookeeper.server.auth.DigestLoginModule required
//	    user_bob="bobsecret";
//	};
type JAAS struct {
	File     string
	Sections []*Section
}

// Section is one named entry of a JAAS file.
type Section struct {
	Name    string
	Line    int
	Modules []*LoginModule
}

// LoginModule is one "class flag key=value ...;" line of a section.
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional
	Options map[string]string
	Line    int
}

// Section returns the section called name, or nil.
func (j *JAAS) Section(name string) *Section {
	if j == nil {
		return nil
	}
	for _, s := range j.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Module returns the section's first module of class, or nil.
func (s *Section) Module(class string) *LoginModule {
	if s == nil {
		return nil
	}
	for _, m := range s.Modules {
		if m.Class == class {
			return m
		}
	}
	return nil
}

// DigestUsers returns the user_NAME="password" options of the section's
// DigestLoginModule, as Apache's SaslServerCallbackHandler collects them:
// the users DIGEST-MD5 can authenticate. It is empty if there is no such
// module.
func (s *Section) DigestUsers() map[string]string {
	users := map[string]string{}
	m := s.Module(DigestLoginModule)
	if m == nil {
		return users
	}
	for k, v := range m.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			users[name] = v
		}
	}
	return users
}

// Credentials returns the username and password options of the section's
// DigestLoginModule: what a client section (Client, QuorumLearner) logs
// in with. ok is false when either is missing.
func (s *Section) Credentials() (user, password string, ok bool) {
	m := s.Module(DigestLoginModule)
	if m == nil {
		return "", "", false
	}
	user, uok := m.Options["username"]
	password, pok := m.Options["password"]
	return user, password, uok && pok
}

// Kerberos is what a Krb5LoginModule line says about the server's
// identity.
type Kerberos struct {
	UseKeyTab bool
	KeyTab    string
	Principal string
	StoreKey  bool
}

// Kerberos returns the section's Krb5LoginModule options, and whether it
// has one.
func (s *Section) Kerberos() (Kerberos, bool) {
	m := s.Module(Krb5LoginModule)
	if m == nil {
		return Kerberos{}, false
	}
	return Kerberos{
		UseKeyTab: strings.EqualFold(m.Options["useKeyTab"], "true"),
		KeyTab:    m.Options["keyTab"],
		Principal: m.Options["principal"],
		StoreKey:  strings.EqualFold(m.Options["storeKey"], "true"),
	}, true
}

// LoadJAAS reads and parses a JAAS file.
func LoadJAAS(path string) (*JAAS, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read JAAS file: %w", err)
	}
	return ParseJAAS(path, data)
}

// ParseJAAS parses a JAAS file. name labels positions in errors
// ("name:line: ..."). Comments are // and /* */, values are words or
// double-quoted strings, as Java's ConfigFile reads them. Java's ${prop}
// expansion is not done: such a value is taken literally.
func ParseJAAS(name string, data []byte) (*JAAS, error) {
	p := &jaasParser{lex: jaasLexer{src: string(data), line: 1}, name: name}
	j := &JAAS{File: name}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			return j, nil
		}
		s, err := p.section(t)
		if err != nil {
			return nil, err
		}
		if prev := j.Section(s.Name); prev != nil {
			return nil, p.errorf(s.Line, "section %q is also defined on line %d", s.Name, prev.Line)
		}
		j.Sections = append(j.Sections, s)
	}
}

type jaasParser struct {
	lex  jaasLexer
	name string
}

func (p *jaasParser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", p.name, line, ErrJAAS, fmt.Sprintf(format, args...))
}

func (p *jaasParser) next() (token, error) {
	t, err := p.lex.next()
	if err != nil {
		line := t.line // where a quoted string started
		if line == 0 {
			line = p.lex.line
		}
		return t, p.errorf(line, "%v", err)
	}
	return t, nil
}

// expect reads a token of kind, or fails naming what was wanted.
func (p *jaasParser) expect(kind tokKind, what string) (token, error) {
	t, err := p.next()
	if err != nil {
		return t, err
	}
	if t.kind != kind {
		return t, p.errorf(t.line, "expected %s, found %s", what, t)
	}
	return t, nil
}

// section parses `Name { module... };` after its name token.
func (p *jaasParser) section(name token) (*Section, error) {
	if name.kind != tokWord && name.kind != tokString {
		return nil, p.errorf(name.line, "expected a section name, found %s", name)
	}
	s := &Section{Name: name.text, Line: name.line}
	if _, err := p.expect(tokLBrace, `"{" after section `+name.text); err != nil {
		return nil, err
	}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokRBrace {
			break
		}
		m, err := p.module(t)
		if err != nil {
			return nil, err
		}
		s.Modules = append(s.Modules, m)
	}
	if _, err := p.expect(tokSemi, `";" after "}" of section `+name.text); err != nil {
		return nil, err
	}
	return s, nil
}

// module parses `class flag key=value ... ;` after its class token.
func (p *jaasParser) module(class token) (*LoginModule, error) {
	if class.kind != tokWord {
		return nil, p.errorf(class.line, "expected a login module class name, found %s", class)
	}
	flag, err := p.expect(tokWord, "a control flag (required, requisite, sufficient, optional)")
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(flag.text) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, p.errorf(flag.line, "invalid control flag %q: want required, requisite, sufficient or optional", flag.text)
	}
	m := &LoginModule{Class: class.text, Flag: strings.ToLower(flag.text), Options: map[string]string{}, Line: class.line}
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokSemi {
			return m, nil
		}
		if t.kind != tokWord {
			return nil, p.errorf(t.line, "expected an option name or \";\", found %s", t)
		}
		if _, err := p.expect(tokEquals, `"=" after option `+t.text); err != nil {
			return nil, err
		}
		v, err := p.next()
		if err != nil {
			return nil, err
		}
		if v.kind != tokWord && v.kind != tokString {
			return nil, p.errorf(v.line, "expected a value for option %s, found %s", t.text, v)
		}
		m.Options[t.text] = v.text
	}
}

// JAASFileFromFlags returns the value of -Djava.security.auth.login.config
// in a JVM flags string (SERVER_JVMFLAGS or JVMFLAGS, as zkServer.sh
// passes them), the last one winning as with java, or "". Flags are split
// on white space; quoting is not interpreted.
//
// This is a small stand-in until the general -D parser reads every system
// property from those variables.
func JAASFileFromFlags(flags string) string {
	const prop = "-Djava.security.auth.login.config="
	file := ""
	for _, f := range strings.Fields(flags) {
		if v, ok := strings.CutPrefix(f, prop); ok {
			file = v
		}
	}
	return file
}
