package auth

import (
	"errors"
	"strings"
	"testing"
)

const apacheJAAS = `// As in Apache's documentation.
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"
       user_bob="bob secret";
};
Client {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="bob"
       password="bob secret";
};
/* Kerberos,
   for the quorum. */
QuorumServer {
       com.sun.security.auth.module.Krb5LoginModule required
       useKeyTab=true
       keyTab="/etc/zk/zk.keytab"
       storeKey=true
       useTicketCache=false
       debug=false
       principal="zookeeper/host1.example.com@EXAMPLE.COM";
};
QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required username="learner" password='l\"p'; };
`

func TestParseJAASApacheFile(t *testing.T) {
	j, err := ParseJAAS("jaas.conf", []byte(apacheJAAS))
	if err != nil {
		t.Fatal(err)
	}
	users := j.Section(SectionServer).DigestUsers()
	if len(users) != 2 || users["super"] != "adminsecret" || users["bob"] != "bob secret" {
		t.Errorf("Server users = %v", users)
	}
	if u, p, ok := j.Section(SectionClient).Credentials(); !ok || u != "bob" || p != "bob secret" {
		t.Errorf("Client credentials = %q %q %v", u, p, ok)
	}
	k, ok := j.Section(SectionQuorumServer).Kerberos()
	want := Kerberos{UseKeyTab: true, KeyTab: "/etc/zk/zk.keytab", StoreKey: true, Principal: "zookeeper/host1.example.com@EXAMPLE.COM"}
	if !ok || k != want {
		t.Errorf("QuorumServer Kerberos = %+v, %v; want %+v", k, ok, want)
	}
	if s := j.Section(SectionQuorumServer); s.Line != 14 || s.Modules[0].Line != 15 {
		t.Errorf("QuorumServer at line %d, module at %d; want 14, 15", s.Line, s.Modules[0].Line)
	}
	if u, p, ok := j.Section(SectionQuorumLearner).Credentials(); !ok || u != "learner" || p != `l"p` {
		t.Errorf("QuorumLearner credentials = %q %q %v", u, p, ok)
	}
	if j.Section("Nope") != nil || len(j.Section("Nope").DigestUsers()) != 0 {
		t.Error("a missing section is not nil or has users")
	}
}

func TestParseJAASErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"no brace", "Server\n org.X required;\n};", `j:2: auth: bad JAAS configuration: expected "{" after section Server`},
		{"no semicolon after section", "Server {\n a.B required;\n}\nClient {};", `j:4: auth: bad JAAS configuration: expected ";" after "}" of section Server, found "Client"`},
		{"bad flag", "Server {\n a.B mandatory x=\"y\";\n};", `j:2: auth: bad JAAS configuration: invalid control flag "mandatory"`},
		{"missing flag", "Server {\n a.B ;\n};", `j:2: auth: bad JAAS configuration: expected a control flag`},
		{"option without value", "Server {\n a.B required\n user_bob= ;\n};", `j:3: auth: bad JAAS configuration: expected a value for option user_bob, found ";"`},
		{"option without equals", "Server {\n a.B required\n user_bob \"x\";\n};", `j:3: auth: bad JAAS configuration: expected "=" after option user_bob`},
		{"unterminated string", "Server {\n a.B required\n user_bob=\"x;\n};", `j:3: auth: bad JAAS configuration: unterminated quoted string`},
		{"unterminated comment", "Server {\n/* never\n ends", `j:2: auth: bad JAAS configuration: unterminated /* comment`},
		{"end of file in section", "Server {\n a.B required x=y;\n", `j:3: auth: bad JAAS configuration: expected a login module class name, found end of file`},
		{"duplicate section", "A { a.B required; };\n\nA { a.B required; };", `j:3: auth: bad JAAS configuration: section "A" is also defined on line 1`},
		{"stray semicolon", ";", `j:1: auth: bad JAAS configuration: expected a section name, found ";"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJAAS("j", []byte(tc.src))
			if !errors.Is(err, ErrJAAS) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant prefix %s", err, tc.want)
			}
		})
	}
}

func TestParseJAASEmpty(t *testing.T) {
	j, err := ParseJAAS("j", []byte("  // nothing\n"))
	if err != nil || len(j.Sections) != 0 {
		t.Fatalf("ParseJAAS(empty) = %+v, %v", j, err)
	}
}

func FuzzParseJAAS(f *testing.F) {
	f.Add([]byte(apacheJAAS))
	f.Add([]byte("A{b c d=\"e\\\"\";};"))
	f.Add([]byte("/* x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := ParseJAAS("fuzz", data)
		if err != nil {
			if !errors.Is(err, ErrJAAS) {
				t.Fatalf("error not marked ErrJAAS: %v", err)
			}
			return
		}
		for _, s := range j.Sections {
			_ = s.DigestUsers()
			_, _ = s.Kerberos()
		}
	})
}

func TestJAASFileFromFlags(t *testing.T) {
	for flags, want := range map[string]string{
		"": "",
		"-Xmx1g -Djava.security.auth.login.config=/etc/zk/jaas.conf -Dzookeeper.x=y": "/etc/zk/jaas.conf",
		"-Djava.security.auth.login.config=/a -Djava.security.auth.login.config=/b":  "/b",
		"-Djava.security.auth.login.configX=/a":                                      "",
	} {
		if got := JAASFileFromFlags(flags); got != want {
			t.Errorf("JAASFileFromFlags(%q) = %q, want %q", flags, got, want)
		}
	}
}
