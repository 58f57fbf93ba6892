package cli

import (
	"path"
	"slices"
	"strings"
)

// complete is the tab completion of the interactive shell, like zkCli's
// JLine completer: the first word completes to a command name, a word
// starting with "/" to a node path. It extends the word under the cursor
// by what all candidates share (a unique command also gets its space).
func (s *shell) complete(line string, pos int) (string, int, bool) {
	head := line[:pos]
	start := strings.LastIndexAny(head, " \t") + 1
	word := head[start:]
	var cands []string
	var suffix string
	switch {
	case start == 0:
		cands, suffix = commandNames(word), " "
	case strings.HasPrefix(word, "/"):
		cands = s.pathCandidates(word)
	}
	if len(cands) == 0 {
		return "", 0, false
	}
	done := commonPrefix(cands)
	if len(cands) == 1 {
		done += suffix
	}
	if done == word {
		return "", 0, false
	}
	return head[:start] + done + line[pos:], start + len(done), true
}

// commandNames lists the commands starting with prefix.
func commandNames(prefix string) []string {
	var out []string
	for n := range commands {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// completeMaxChildren bounds the children completion lists. A node with
// more (say 200k) could answer getChildren with more than the frame
// limit, which would cost the connection; and a list that long helps no
// one at a prompt. Above it, paths do not complete.
const completeMaxChildren = 10000

// pathCandidates lists the children of word's parent that complete its
// last name, as full paths.
func (s *shell) pathCandidates(word string) []string {
	i := strings.LastIndexByte(word, '/')
	dir, prefix := word[:i], word[i+1:]
	if dir == "" {
		dir = "/"
	}
	if s.client == nil {
		return nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	ok, st, err := s.client.Exists(ctx, dir)
	if err != nil || !ok || st.NumChildren > completeMaxChildren {
		return nil
	}
	children, _, err := s.client.Children(ctx, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range children {
		if strings.HasPrefix(c, prefix) {
			out = append(out, path.Join(dir, c))
		}
	}
	slices.Sort(out)
	return out
}

// commonPrefix is the longest prefix of all of ss (not empty).
func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
