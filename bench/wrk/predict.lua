-- wrk script: POST the JSON body in $PREDICT_BODY to /predict (bench/server-load.sh writes it).
local file = assert(io.open(os.getenv("PREDICT_BODY"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
wrk.headers["Content-Type"] = "application/json"
file:close()
