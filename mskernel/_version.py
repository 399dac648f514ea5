"""The core's version and the version of the plugin API it implements (a bottom module: the
plugin host and the file format read them without importing the top-level package)."""

__version__ = "0.1.0"

#: The version of the plugin API: hookspecs, registries and the Backend interface.
PLUGIN_API_VERSION = "1.0"
