package stagekit_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The author's page states at most ten rules, numbered under "The rules",
// and names the two example stages that show them.
//
// spec: KIT5
func TestThePackageDocStatesAtMostTenRules(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	start := strings.Index(doc, "// # The rules")
	if start < 0 {
		t.Fatal("no section The rules")
	}
	section := doc[start+len("// # The rules"):]
	if end := strings.Index(section, "// # "); end >= 0 {
		section = section[:end]
	}
	rules := regexp.MustCompile(`(?m)^//\s+(\d+)\. `).FindAllStringSubmatch(section, -1)
	if len(rules) == 0 || len(rules) > 10 {
		t.Errorf("%d rules, want 1 to 10", len(rules))
	}
	for i, r := range rules {
		if r[1] != strconv.Itoa(i+1) {
			t.Errorf("rule %d is numbered %s", i+1, r[1])
		}
	}
	for _, ex := range []string{"ExampleHook", "ExampleBehavior"} {
		if !strings.Contains(section, ex) {
			t.Errorf("the rules do not name %s", ex)
		}
	}
}
