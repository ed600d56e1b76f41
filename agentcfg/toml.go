package agentcfg

import (
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// tomlDoc is a decoded TOML document. go-toml/v2 refuses what TOML forbids
// (a key or table defined twice), so a document Codex would read
// differently is refused here too, and then reverted whole.
type tomlDoc struct{ m map[string]any }

func parseTOML(data []byte) (*tomlDoc, error) {
	m := map[string]any{}
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a TOML document: %w", err)
	}
	return &tomlDoc{m: m}, nil
}

func (t *tomlDoc) lookup(path []string) (any, bool) {
	var v any = t.m
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func (t *tomlDoc) has(path []string) bool {
	_, ok := t.lookup(path)
	return ok
}

func (t *tomlDoc) keysAt(path []string) []string {
	v, ok := t.lookup(path)
	m, isMap := v.(map[string]any)
	if !ok || !isMap {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (t *tomlDoc) set(path []string, from document) error {
	if len(path) == 0 {
		return fmt.Errorf("agentcfg: empty path")
	}
	v, ok := from.lookup(path)
	m := t.m
	for _, k := range path[:len(path)-1] {
		next, isMap := m[k].(map[string]any)
		if !isMap {
			if !ok {
				return nil // nothing below a missing table to remove
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := path[len(path)-1]
	if !ok {
		delete(m, last)
		return nil
	}
	m[last] = deepCopy(v)
	return nil
}

func (t *tomlDoc) bytes() ([]byte, error) { return toml.Marshal(t.m) }

func (t *tomlDoc) oddities() []string { return nil }
