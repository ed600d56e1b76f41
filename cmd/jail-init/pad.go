package main

// padding is what make build lays into the lean init's read-only data
// (layout.go). It is empty in the source: make build gives the compiler
// another copy of this file with a string of the length that
// internal/rodatapad prints (go build -overlay, so the tree is never
// written and a plain go build needs nothing).
const padding = ""
