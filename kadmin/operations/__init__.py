"""What an operator runs, one module each: a request in, a result out; used alike by the CLI
and the Spark entry point."""
