"""Backups of Pinecone indexes: pure policies for VectorIndexBackup and VectorIndexBackupSchedule."""
