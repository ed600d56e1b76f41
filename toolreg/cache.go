package toolreg

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/internal/replacefile"
)

// cache keeps the tools' answers in one JSON file, each with what it was
// computed from: the binary's and the files' (path, size, mtime) and the
// environment values it read. An entry whose inputs changed is asked again.
type cache struct {
	mu      sync.Mutex // the tools are asked concurrently
	path    string
	entries map[string]cacheEntry
	dirty   bool
}

type cacheEntry struct {
	Inputs []string `json:"inputs"`
	Answer string   `json:"answer"`
}

// stamp is one file's identity for the cache: path, size and mtime, or
// "absent".
func stamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return path + " absent"
	}
	return path + " " + st.ModTime().UTC().Format("2006-01-02T15:04:05.000000000") + " " + itoa(st.Size())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func cacheKey(tool, bin string, args []string) string {
	return tool + "\x00" + bin + "\x00" + strings.Join(args, "\x00")
}

func inputsOf(bin string, env, files []string) []string {
	in := []string{"bin " + stamp(bin)}
	if real, err := filepath.EvalSymlinks(bin); err == nil && real != bin {
		in = append(in, "bin "+stamp(real))
	}
	for _, e := range env {
		in = append(in, "env "+e)
	}
	for _, f := range files {
		in = append(in, "file "+stamp(f))
	}
	return in
}

func loadCache(path string) *cache {
	c := &cache{path: path, entries: map[string]cacheEntry{}}
	if path == "" {
		return c
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	// A damaged file is only a cache: start again.
	if json.Unmarshal(data, &c.entries) != nil {
		c.entries = map[string]cacheEntry{}
	}
	return c
}

func (c *cache) entry(key string) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, ok
}

func (c *cache) get(key, bin string, env, files []string) (string, bool) {
	e, ok := c.entry(key)
	if !ok || !slices.Equal(e.Inputs, inputsOf(bin, env, files)) {
		return "", false
	}
	return e.Answer, true
}

func (c *cache) put(key, bin string, env, files []string, answer string) {
	in := inputsOf(bin, env, files)
	c.mu.Lock()
	c.entries[key] = cacheEntry{Inputs: in, Answer: answer}
	c.dirty = true
	c.mu.Unlock()
}

// save writes the file whole (a temporary file renamed over it), private
// to the user; failing to is not an error, only the next run asks again.
func (c *cache) save() {
	if c.path == "" || !c.dirty {
		return
	}
	data, err := json.MarshalIndent(c.entries, "", " ")
	if err != nil {
		return
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	_ = replacefile.Write(c.path, ".toolreg-*.json", data, false)
}
