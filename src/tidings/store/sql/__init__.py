"""The SQL both backends share: values, statements, row converters and the methods
whose SQL is the same on SQLite and PostgreSQL, written once.

A backend keeps only what truly differs (schema and migrations, search, claims and
locks, bulk insert, transfer) and says how it differs in a small ``Dialect``. Each
backend's mixin inherits the shared methods from here and its connections from its
own ``Access``.
"""
