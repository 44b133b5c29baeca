"""One bug's reports grouped: signatures, similar reports, duplicates, the Markdown a report is
shared as."""
