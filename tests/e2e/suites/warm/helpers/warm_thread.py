"""A preload that starts a thread and keeps it: a zygote holding it must not fork."""
import threading
import time

threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
