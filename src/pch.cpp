// Compiles nothing of its own: the target built from it owns the precompiled header that the
// other targets reuse (CMakeLists.txt, "Precompiled headers").
