package zktest

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

func TestLinkForwardsCutsAndHeals(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	l, err := NewLink(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	echo := func() error {
		c, err := net.DialTimeout("tcp", l.Addr(), time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("hi\n")); err != nil {
			return err
		}
		_, err = bufio.NewReader(c).ReadString('\n')
		return err
	}
	if err := echo(); err != nil {
		t.Fatalf("through the link: %v", err)
	}

	open, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(open).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	l.SetCut(true)
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("open connection after the cut: read %v, want EOF", err)
	}
	if err := echo(); err == nil {
		t.Errorf("a new connection got through a cut link")
	}
	l.SetCut(false)
	if err := echo(); err != nil {
		t.Errorf("after healing: %v", err)
	}
}
