package migrating_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// block is one fenced code block of the guide, with the comment line
// before it that says whose code it is.
type block struct {
	mark, code string
	line       int
}

func blocks(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") || len(lines[i]) == 3 {
			continue
		}
		b := block{line: i + 1}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) != "" {
				b.mark = strings.TrimSpace(lines[j])
				break
			}
		}
		var code []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			code = append(code, lines[i])
		}
		b.code = strings.Join(code, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

var troupeMark = regexp.MustCompile(`^<!-- troupe: (\S+) -->$`)

// docs/migrating.md shows the troupe side of each pair as the compiled
// code is, and every pair's troupe side is in it.
//
// spec: PP6
func TestTheMigrationGuideShowsTheCompiledCode(t *testing.T) {
	root := filepath.Join("..", "..")
	guide, err := os.ReadFile(filepath.Join(root, "docs", "migrating.md"))
	require.NoError(t, err)
	pairs, err := os.ReadFile("pairs_test.go")
	require.NoError(t, err)
	shown := 0
	for _, b := range blocks(string(guide)) {
		if b.mark == "<!-- theirs -->" {
			continue
		}
		m := troupeMark.FindStringSubmatch(b.mark)
		if !assert.NotNil(t, m, "docs/migrating.md:%d: a code block must follow <!-- theirs --> or <!-- troupe: FILE -->", b.line) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, m[1]))
		require.NoError(t, err)
		assert.Contains(t, string(src), b.code, "docs/migrating.md:%d: not as %s has it", b.line, m[1])
		shown++
	}
	for _, f := range regexp.MustCompile(`(?m)^func (\w+Style)\(`).FindAllStringSubmatch(string(pairs), -1) {
		assert.Contains(t, string(guide), "func "+f[1]+"(", "docs/migrating.md does not show %s", f[1])
	}
	assert.Equal(t, 5, shown)
}
