// Package credswap keeps an agent in the sandbox from swapping the tokens of
// another account into the user's agent credential files.
//
// The files stay writable inside (agents refresh their OAuth tokens), but a
// file names no account and refresh tokens rotate, so an agent can write an
// attacker's tokens there and the user's CLI on the host then works as the
// attacker's account: conversations and uploaded code go to the attacker
// (session 19; checking an account key is beaten by writing tokens only).
// So at the run's end a changed entry is kept only when its refresh was due
// during the run: the start's expiry lies within Margin of the run's end (or
// had passed). Any other change is put back to the start's value, and every
// change is said. Token values are never said.
package credswap

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Margin is how long before its expiry an agent may refresh a token. Claude
// Code and google-auth-library refresh 5 minutes early; this leaves room.
const Margin = 10 * time.Minute

// codexRefreshAge is how old Codex lets its last_refresh get before it
// refreshes (TOKEN_REFRESH_INTERVAL, 8 days).
const codexRefreshAge = 8 * 24 * time.Hour

// Kind is how a file's entries and their expiries are read.
type Kind string

const (
	// Claude: {claudeAiOauth:{expiresAt ms}, mcpOAuth:{NAME:{expiresAt ms}},
	// designOauth:{expiresAt ms}, organizationUuid, trustedDeviceToken, ...}:
	// each top key an entry (claude 2.1.197), due by its expiresAt if any.
	Claude Kind = "claude"
	// Codex: {auth_mode, OPENAI_API_KEY, tokens:{access_token JWT},
	// last_refresh RFC 3339, agent_identity, ...} (codex 0.171): tokens and
	// last_refresh due together; every other key never due.
	Codex  Kind = "codex"
	Gemini Kind = "gemini" // {access_token, refresh_token, expiry_date ms}: one entry
	// GeminiMCP: [{serverName, token:{accessToken, expiresAt ms}, ...}]
	GeminiMCP Kind = "gemini-mcp"
)

// File is one credential file, relative to $HOME.
type File struct {
	Agent string
	Path  string
	Kind  Kind
}

// Files are the credential files checked at each run's end.
var Files = []File{
	{Agent: "claude", Path: ".claude/.credentials.json", Kind: Claude},
	{Agent: "codex", Path: ".codex/auth.json", Kind: Codex},
	{Agent: "gemini", Path: ".gemini/oauth_creds.json", Kind: Gemini},
	{Agent: "gemini", Path: ".gemini/mcp-oauth-tokens.json", Kind: GeminiMCP},
}

// entry is one refreshable unit of a file: its value and when it is due.
type entry struct {
	raw json.RawMessage
	due time.Time // zero: unknown (never due)
}

// entries splits a document into its entries, keyed by their names
// ("claudeAiOauth", "mcpOAuth.github", "tokens", "(file)"). ok is false for a
// document that is not a JSON object.
func entries(k Kind, data []byte) (map[string]entry, bool) {
	if k == GeminiMCP {
		return serverEntries(data)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, false
	}
	out := map[string]entry{}
	switch k {
	case Claude:
		for name, raw := range top {
			if name == "mcpOAuth" {
				var m map[string]json.RawMessage
				if json.Unmarshal(raw, &m) == nil && m != nil {
					for s, v := range m {
						out["mcpOAuth."+s] = entry{raw: v, due: msField(v, "expiresAt")}
					}
					continue
				}
			}
			out[name] = entry{raw: raw, due: msField(raw, "expiresAt")}
		}
	case Codex:
		var due time.Time
		var last string
		if json.Unmarshal(top["last_refresh"], &last) == nil {
			if t, err := time.Parse(time.RFC3339Nano, last); err == nil {
				due = t.Add(codexRefreshAge)
			}
		}
		var tok struct {
			Access string `json:"access_token"`
		}
		if json.Unmarshal(top["tokens"], &tok) == nil {
			if exp := jwtExp(tok.Access); !exp.IsZero() && (due.IsZero() || exp.Before(due)) {
				due = exp
			}
		}
		// One account: tokens and their refresh time go together; any
		// other key (an API key) is an entry of its own, never due.
		for name, raw := range top {
			e := entry{raw: raw}
			if name == "tokens" || name == "last_refresh" {
				e.due = due
			}
			out[name] = e
		}
	case Gemini:
		due := msField(data, "expiry_date")
		for name, raw := range top {
			out[name] = entry{raw: raw, due: due}
		}
	}
	return out, true
}

// serverEntries splits Gemini CLI's MCP token list by server name.
func serverEntries(data []byte) (map[string]entry, bool) {
	var list []json.RawMessage
	if json.Unmarshal(data, &list) != nil {
		return nil, false
	}
	out := map[string]entry{}
	for _, raw := range list {
		var e struct {
			Name  string          `json:"serverName"`
			Token json.RawMessage `json:"token"`
		}
		if json.Unmarshal(raw, &e) != nil {
			return nil, false
		}
		name := "server " + e.Name
		if _, dup := out[name]; dup {
			return nil, false // which one the CLI reads is its choice: the start's file whole
		}
		out[name] = entry{raw: raw, due: msField(e.Token, "expiresAt")}
	}
	return out, true
}

// msField reads a number of milliseconds since the epoch.
func msField(raw json.RawMessage, key string) time.Time {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return time.Time{}
	}
	var ms float64
	if json.Unmarshal(m[key], &ms) != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// jwtExp reads a JWT's exp claim, unverified (the host's own token, read to
// know when its CLI would refresh it).
func jwtExp(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var c struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(b, &c) != nil || c.Exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(c.Exp), 0)
}

// Decision is what the end does with one changed file.
type Decision struct {
	Kept    []string // entries changed with a refresh due: kept
	Undone  []string // entries changed without one: put back
	Restore []byte   // the bytes to write; nil: keep the file as it is
	// Created: the file did not exist at start and is kept: a sign-in
	// inside, which the agent profiles allow (their sign-in hosts,
	// Codex's callback port). Said, for the user to judge.
	Created bool
}

// Decide compares a file's start and end versions. start nil: absent at
// start; end nil: absent at the end. end is the run's end.
func Decide(k Kind, start, end []byte, endAt time.Time) Decision {
	if bytes.Equal(start, end) && (start == nil) == (end == nil) {
		return Decision{}
	}
	if end == nil {
		// A sign-out: nothing of another account is left to use.
		return Decision{Kept: []string{"(file removed)"}}
	}
	if start == nil {
		// A sign-in inside, as the agent profiles allow (a new user's
		// first contact: `jail -P claude -- claude`, then /login): kept,
		// and said at the end, naming the file, so that a file the user
		// did not make by signing in is theirs to remove. Why not put
		// back: removing it undid every sign-in inside jail, and with no
		// start's tokens there is no account of the user's to swap out;
		// what a swap into an existing file does is put back below.
		return Decision{Kept: []string{"(file created)"}, Created: true}
	}
	se, sok := entries(k, start)
	ee, eok := entries(k, end)
	if !sok || !eok {
		return Decision{Undone: []string{"(whole file)"}, Restore: start}
	}
	var d Decision
	merged := map[string]json.RawMessage{}
	names := map[string]bool{}
	for n := range se {
		names[n] = true
	}
	for n := range ee {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		s, inS := se[n]
		e, inE := ee[n]
		switch {
		case inS && inE && jsonEqual(s.raw, e.raw):
			merged[n] = e.raw
		case inS && !s.due.IsZero() && !s.due.After(endAt.Add(Margin)):
			// The start's token expired, or would within the margin
			// by the run's end: its CLI refreshed it.
			d.Kept = append(d.Kept, n)
			if inE {
				merged[n] = e.raw
			}
		default:
			d.Undone = append(d.Undone, n)
			if inS {
				merged[n] = s.raw
			}
		}
	}
	if len(d.Undone) == 0 {
		return d
	}
	if len(d.Kept) == 0 {
		d.Restore = start
		return d
	}
	d.Restore = assemble(k, merged)
	return d
}

// assemble builds a document from its entries (mcpOAuth.NAME nested again).
func assemble(k Kind, m map[string]json.RawMessage) []byte {
	if k == GeminiMCP {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		list := make([]json.RawMessage, 0, len(m))
		for _, n := range names {
			list = append(list, m[n])
		}
		return mustMarshal(list)
	}
	top := map[string]any{}
	mcp := map[string]json.RawMessage{}
	for n, v := range m {
		if s, ok := strings.CutPrefix(n, "mcpOAuth."); ok && k == Claude {
			mcp[s] = v
			continue
		}
		top[n] = v
	}
	if len(mcp) > 0 {
		top["mcpOAuth"] = mcp
	}
	return mustMarshal(top)
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("credswap: marshal of parsed values: %v", err)) // cannot happen: every value was parsed
	}
	return b
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
