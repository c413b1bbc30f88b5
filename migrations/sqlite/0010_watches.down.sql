DROP TABLE watches;
