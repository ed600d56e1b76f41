//go:build !linux

package sandbox

func symlinksIn(dir string, each func(name, target string)) { symlinksPortable(dir, each) }
