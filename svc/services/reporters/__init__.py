"""The person who filed a report: the status page, its signed link and words, the mails they get."""
