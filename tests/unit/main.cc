// The doctest main for keyshard's unit tests. Meson runs them with the working directory set to
// tests/, so fixtures are opened as "data/...".
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
