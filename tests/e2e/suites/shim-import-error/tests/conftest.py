"""Imports the helper every test file of this suite needs (as a real suite's conftest imports its
package): under the shim, the helper fails to import."""
import helpers  # noqa: F401
