// Package doclinks checks the repository's doc comments: every doc link
// and every plain mention of a package's name followed by a name names
// something that exists, in every module of the workspace. It holds only
// that test.
package doclinks
