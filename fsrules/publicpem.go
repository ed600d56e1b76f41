package fsrules

import "path"

// This file: the CA certificate bundles Python packages ship under a *.pem
// name, which the built-in *.pem rule does not hide.

// pemRule is the built-in rule the exemption lifts (a user's own
// --deny '*.pem' is theirs, and holds).
const pemRule = "default: *.pem"

// publicBundles are the bundles, by their directory's name and their own:
// certifi's (requests, httpx and most Python HTTPS clients; pip's vendored
// copy at pip/_vendor/certifi), botocore's and grpcio's. Each is the
// public root certificates the package verifies servers with. Hidden as
// *.pem, every HTTPS request of the pip of a Python other than the
// distribution's (a pyenv Python's venv, as seen) failed inside
// ("Permission denied" on cacert.pem: no TLS connection verifies without
// it), while jail relays TLS untouched and the certificates are public.
// Exact names, in lower case
// as the packages ship them; a symlink by such a name is not exempt (it
// may lead anywhere: Debian's certifi links the system bundle).
var publicBundles = map[[2]string]bool{
	{"certifi", "cacert.pem"}:     true,
	{"botocore", "cacert.pem"}:    true,
	{"_credentials", "roots.pem"}: true, // grpc/_cython/_credentials
}

// publicBundle reports whether the regular file base in dir is one of the
// public CA bundles, which rule r (the built-in *.pem) does not hide.
func publicBundle(r *rule, dir, base string, isDir, isLink bool) bool {
	if isDir || isLink || r.name != pemRule || r.user {
		return false
	}
	return publicBundles[[2]string{path.Base(dir), base}]
}
