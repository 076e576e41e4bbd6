-- A skill's description carries the mark of the scan it passed (safety/stored-mark.ts): a new
-- session's prompt shows it without scanning it again in every new process.
-- AlterTable
ALTER TABLE "Skill" ADD COLUMN "descriptionChecked" TEXT;
