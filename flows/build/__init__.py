"""Running a build: the stage registry, the engine and its done-markers, the Prefect flow."""
