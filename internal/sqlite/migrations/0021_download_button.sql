-- 0021_download_button: whether a project's player offers its listeners a
-- button that downloads the MP3; off, as before, for every project.
ALTER TABLE project_access ADD COLUMN download_button INTEGER NOT NULL DEFAULT 0;
